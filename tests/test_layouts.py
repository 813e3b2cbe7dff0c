"""Backend-private tensor layouts (Backend.tensor_layouts): a backend may keep the tensors that
never leave it in a layout of its own; everything at its edges stays dense.

The backend here is real numpy: its layout REVERSED stores a float32 tensor's elements back to
front, followed by PAD bytes of canary. A kernel told the wrong layout reads its input reversed,
and a core that sized the tensor by its dense bytes lets the canary land in a neighbour, so
both show up in the results."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend import Backend, DeviceInfo, KernelSpec, PyExecution
from mnn_core.errors import BackendError

REVERSED = 5
PAD = 64
CANARY = 0xAB


def _load(view: np.ndarray, info) -> np.ndarray:
    """The dense value of a tensor kept in `info.layout`."""
    if info.layout == REVERSED:
        assert (view[info.nbytes :] == CANARY).all(), "the padding of a REVERSED tensor was overwritten"
        return view[: info.nbytes].view(np.float32)[::-1].reshape(info.shape)
    assert info.layout == 0
    return view


def _store(view: np.ndarray, info, value: np.ndarray) -> None:
    if info.layout == REVERSED:
        view[: info.nbytes].view(np.float32)[:] = value.reshape(-1)[::-1]
        view[info.nbytes :] = CANARY
    else:
        np.copyto(view, value)


def _relu_streaming(src: np.ndarray, src_info, dst: np.ndarray, dst_info) -> None:
    """Relu element by element, as an in-place kernel streams: were src and dst one buffer in two
    layouts, the second half would read what the first half wrote."""
    n = src_info.size
    a, b = (v[: n * 4].view(np.float32).reshape(-1) for v in (src.view(np.uint8), dst.view(np.uint8)))
    for k in range(n):
        value = a[n - 1 - k] if src_info.layout == REVERSED else a[k]
        b[n - 1 - k if dst_info.layout == REVERSED else k] = max(value, 0.0)
    if dst_info.layout == REVERSED:
        dst[n * 4 :] = CANARY


class ReversedBackend(Backend):
    """Neg, Relu and same-shape Add, keeping every float32 tensor it is offered REVERSED."""

    name = "reversed"
    FNS = {"Neg": np.negative, "Relu": lambda a: np.maximum(a, 0), "Add": np.add}

    def __init__(self, choose=None, inplace_relu=False):
        self.choose = choose  # None: every float32 candidate; else a function of the candidates
        self.inplace_relu = inplace_relu
        self.offered: list = []

    def devices(self):
        return [DeviceInfo("numpy", peak_gflops=1e6, bandwidth_gbs=1e6, launch_us=0.01)]

    def kernels(self):
        same = lambda n, ins: ins[0].shape == ins[1].shape or "no broadcast"  # noqa: E731
        return {
            "Neg": KernelSpec("Neg"),
            "Relu": KernelSpec("Relu", inplace=self.inplace_relu),
            "Add": KernelSpec("Add", supports=same),
        }

    def tensor_layouts(self, candidates, ctx):
        self.offered = [c.value for c in candidates]
        if self.choose is not None:
            return self.choose(candidates)
        return {c.value: REVERSED for c in candidates if c.info.dtype == "float32"}

    def tensor_nbytes(self, info, ctx=None):
        return info.nbytes + (PAD if info.layout == REVERSED else 0)

    def prepare(self, node, ins, outs, constants, ctx):
        fn = self.FNS[node.op]
        if node.op == "Relu" and self.inplace_relu:
            return PyExecution(lambda i, o: _relu_streaming(i[0], ins[0], o[0], outs[0]))

        def run(i, o):
            _store(o[0], outs[0], fn(*[_load(v, info) for v, info in zip(i, ins)]))

        return PyExecution(run)


def _chain():
    """x -> Neg -> Relu -> Neg -> Add(., x) -> out"""
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    y = b.Neg(b.Relu(b.Neg(x)))
    b.output(b.Add(y, x), "out")
    return b.build()


X = np.linspace(-2, 2, 21, dtype=np.float32).reshape(3, 7)


def test_inside_tensors_take_the_backend_layout_and_its_sizes(register_backend):
    backend = register_backend(ReversedBackend())
    sess = mnn.Session(_chain(), backend="reversed", fallback=False)
    inside = [p.node for p in sess.plan][:3]  # the outputs of Neg, Relu, Neg: each read only here
    assert sess.plan.layouts == {name: REVERSED for name in inside}
    assert backend.offered == inside  # not x (a graph input), not out (a graph output)
    for _ in range(2):
        np.testing.assert_array_equal(sess.run({"x": X})["out"], -np.maximum(-X, 0) + X)
    assert "backend-private layouts" in str(sess.plan)

    class Dense(ReversedBackend):
        name = "dense"

    register_backend(Dense(choose=lambda cands: {}))
    dense_sess = mnn.Session(_chain(), backend="dense", fallback=False)
    assert dense_sess.plan.layouts == {}
    assert sess.memory["host"].naive_bytes - dense_sess.memory["host"].naive_bytes == 3 * PAD


def test_tensors_read_elsewhere_stay_dense(register_backend):
    """A value also read by another backend's op, or by a view op the core elides, is not offered."""
    backend = register_backend(ReversedBackend())
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 6))
    r = b.Relu(b.Neg(x))  # Relu's output: read by Sigmoid, which runs on the reference backend
    s = b.Sigmoid(r)
    n = b.Neg(r)
    flat = b.Reshape(b.Neg(n), shape=[12])  # the second Neg's output feeds a view
    b.output(b.Add(s, n), "a")
    b.output(flat, "b")
    sess = mnn.Session(b.build(), backend="reversed")
    names = {p.node: p.op for p in sess.plan}
    relu, sigmoid = (next(n for n, op in names.items() if op == kind) for kind in ("Relu", "Sigmoid"))
    assert sess.plan.placements[2].node == sigmoid and sess.plan.placements[2].backend == "reference"
    negs = [n for n, op in names.items() if op == "Neg"]
    # offered: the first Neg's output (read by Relu) and n (read by a Neg and the Add); not Relu's
    # output (Sigmoid reads it) nor the last Neg's (Reshape, a view, reads it)
    assert backend.offered == [negs[0], negs[1]] and relu not in sess.plan.layouts
    assert list(sess.plan.layouts) == backend.offered
    got = sess.run({"x": X[:2, :6]})
    r_ = np.maximum(-X[:2, :6], 0)
    np.testing.assert_allclose(got["a"], 1 / (1 + np.exp(-r_)) - r_, rtol=1e-6)
    np.testing.assert_array_equal(got["b"], r_.reshape(12))


def test_in_place_ops_never_alias_across_layouts(register_backend):
    """Relu may run in place, but its REVERSED input and its dense output (a graph output) must
    not share memory: reversing within one buffer would scramble it."""
    register_backend(ReversedBackend(inplace_relu=True))
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    b.output(b.Relu(b.Neg(b.Neg(x))), "out")
    sess = mnn.Session(b.build(), backend="reversed", fallback=False)
    assert len(sess.plan.layouts) == 2
    np.testing.assert_array_equal(sess.run({"x": X})["out"], np.maximum(X, 0))


@pytest.mark.parametrize(
    "choice,message",
    [
        (lambda cands: {"x": REVERSED}, "not one of the tensors it was offered"),
        (lambda cands: {cands[0].value: "nc16"}, "a layout is an int code"),
        (lambda cands: {cands[0].value: -1}, "a layout is an int code"),
    ],
)
def test_bad_layout_choices_are_clear_errors(register_backend, choice, message):
    register_backend(ReversedBackend(choose=choice))
    with pytest.raises(BackendError, match=message):
        mnn.Session(_chain(), backend="reversed", fallback=False).run({"x": X})


def test_candidates_name_producer_and_consumers(register_backend):
    seen = {}

    def record(cands):
        seen.update({c.value: c for c in cands})
        return {}

    register_backend(ReversedBackend(choose=record))
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    n = b.Neg(x)
    b.output(b.Add(n, n), "out")  # one consumer reading the value twice
    mnn.Session(b.build(), backend="reversed", fallback=False).run({"x": X})
    (cand,) = seen.values()
    assert cand.producer.op == "Neg" and cand.info.layout == 0
    assert [(node.op, i) for node, i in cand.consumers] == [("Add", 0), ("Add", 1)]


def test_candidates_describe_their_nodes_other_operands(register_backend):
    """A backend judging a consumer needs its other operands: every value's TensorInfo (a weight's
    shape) and which values are constants (known at prepare)."""
    seen = {}

    def choose(cands):
        (cand,) = cands  # Neg's output, read by the Add
        ((add, index),) = cand.consumers
        other = add.inputs[1 - index]
        seen.update(
            shape=tuple(cand.infos[other].shape), constant=other in cand.constants, input_constant="x" in cand.constants
        )
        return {}

    register_backend(ReversedBackend(choose=choose))
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    b.output(b.Add(b.Neg(x), b.const(np.ones((3, 7), np.float32))), "out")
    mnn.Session(b.build(), backend="reversed", fallback=False, optimize=False)
    assert seen == {"shape": (3, 7), "constant": True, "input_constant": False}
