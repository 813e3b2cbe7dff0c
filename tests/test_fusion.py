"""Backend fusions (mnn_core/runtime/fusion.py): at each plan a backend may run some of its placed ops as one
op of its own, and the core checks that the fusion is sound before building the plan on it.

The backend here is numpy: Neg, Relu and Add, plus its own op "fuser.NegRelu", max(-x, 0), which
it proposes wherever a Neg's output is read by a Relu alone (or, to test the core's checks,
wherever told to)."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend import Backend, DeviceInfo, KernelSpec, PyExecution
from mnn_core.errors import BackendError
from mnn_core.fusion import Fusion
from mnn_core.graph.ir import Node

FNS = {
    "Neg": np.negative,
    "Relu": lambda a: np.maximum(a, 0),
    "Add": np.add,
    "fuser.NegRelu": lambda a: np.maximum(-a, 0),
}


class FuserBackend(Backend):
    name = "fuser"

    def __init__(self, propose=None):
        self.propose = propose  # None: fuse Neg -> Relu where the offer allows; else offer -> fusions
        self.offers: list = []
        self.prepared: list[str] = []

    def devices(self):
        return [DeviceInfo("numpy", peak_gflops=1e6, bandwidth_gbs=1e6, launch_us=0.01)]

    def kernels(self):
        return {op: KernelSpec(op) for op in ("Neg", "Relu", "Add")}

    def fuse(self, offer, ctx):
        self.offers.append(offer)
        if self.propose is not None:
            return self.propose(offer)
        fusions = []
        for node in offer.nodes:
            relu = offer.sole_reader(node.outputs[0]) if node.op == "Neg" else None
            if relu is not None and relu.op == "Relu":
                fused = Node("fuser.NegRelu", list(node.inputs), list(relu.outputs), {}, f"{node.name}+{relu.name}")
                fusions.append(Fusion(fused, (node.name, relu.name), "one pass"))
        return fusions

    def prepare(self, node, ins, outs, constants, ctx):
        self.prepared.append(node.op)
        fn = FNS[node.op]
        return PyExecution(lambda i, o: np.copyto(o[0], fn(*i)))


X = np.linspace(-2, 2, 21, dtype=np.float32).reshape(3, 7)


def _graph():
    """x -> Neg -> Relu -> Add(., x) -> out"""
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    b.output(b.Add(b.Relu(b.Neg(x)), x), "out")
    return b.build()


def test_a_fusion_runs_in_place_of_the_ops_it_replaces(register_backend):
    backend = register_backend(FuserBackend())
    sess = mnn.Session(_graph(), backend="fuser", fallback=False)
    ops = [p.op for p in sess.plan]
    assert ops == ["fuser.NegRelu", "Add"]
    ((fused, replaced),) = sess.plan.fused.items()
    assert [sess.plan.placements[0].node] == [fused] and len(replaced) == 2
    assert sess.plan.placements[0].reason.startswith("fused: ") and "one pass" in sess.plan.placements[0].reason
    assert "fused by their backend" in str(sess.plan) and sess.plan.to_dict()["fused"] == {fused: replaced}
    np.testing.assert_array_equal(sess.run({"x": X})["out"], np.maximum(-X, 0) + X)
    assert backend.prepared == ["fuser.NegRelu", "Add"]
    assert [s for s, _ in sess.profile()] == [fused, sess.plan.placements[1].node]

    plain = mnn.Session(_graph(), backend="fuser", fallback=False, fuse=False)
    assert [p.op for p in plain.plan] == ["Neg", "Relu", "Add"] and plain.plan.fused == {}
    np.testing.assert_array_equal(plain.run({"x": X})["out"], np.maximum(-X, 0) + X)
    # the Neg's output no longer exists, so the fused plan holds one tensor fewer
    assert sess.memory["host"].naive_bytes == plain.memory["host"].naive_bytes - X.nbytes


def test_the_offer_says_who_reads_each_value(register_backend):
    """sole_reader: a value read twice, read on another backend, or a graph output is not fusable."""
    backend = register_backend(FuserBackend())
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    n1 = b.Neg(x)
    b.output(b.Add(b.Relu(n1), n1), "a")  # n1: read by Relu and Add
    n2 = b.Neg(x)
    b.output(b.Sigmoid(n2), "b")  # n2: read on the reference backend
    n3 = b.output(b.Neg(x), "c")
    b.output(b.Relu(n3), "d")  # n3: a graph output
    sess = mnn.Session(b.build(), backend="fuser")
    assert sess.plan.fused == {}
    (offer,) = backend.offers
    assert offer.backend == "fuser" and all(sess.plan.placements[i].backend == "fuser" for i in (0, 1))
    assert "Sigmoid" not in [n.op for n in offer.nodes]  # only the ops placed on this backend
    assert [offer.sole_reader(v) for v in (n1, n2, n3)] == [None, None, None]
    assert offer.sole_reader(x) is None and offer.infos[n1].shape == (3, 7)
    got = sess.run({"x": X})
    np.testing.assert_array_equal(got["a"], np.maximum(-X, 0) - X)
    np.testing.assert_array_equal(got["d"], np.maximum(-X, 0))


def _named(offer, *ops):
    return [next(n for n in offer.nodes if n.op == op) for op in ops]


def _propose_outputs(outputs_of):
    """A fusion of the first Neg and Relu whose node writes outputs_of(neg, relu)."""

    def propose(offer):
        neg, relu = _named(offer, "Neg", "Relu")
        node = Node("fuser.NegRelu", list(neg.inputs), outputs_of(neg, relu), {}, "fused")
        return [Fusion(node, (neg.name, relu.name))]

    return propose


@pytest.mark.parametrize(
    "graph,propose,message",
    [
        # the Neg's output is also read by the Add: the fused node must write it, and does not
        ("shared", _propose_outputs(lambda neg, relu: list(relu.outputs)), "read outside the group"),
        # a value the group never wrote
        (
            "plain",
            _propose_outputs(lambda neg, relu: [relu.outputs[0], "elsewhere"]),
            "not written by the nodes it replaces",
        ),
        # the Neg's output, read by a Sigmoid (reference backend) before the Relu runs
        ("early", _propose_outputs(lambda neg, relu: [neg.outputs[0], relu.outputs[0]]), "before"),
        # an input the group does not read
        (
            "plain",
            lambda offer: [Fusion(Node("Neg", ["out"], list(offer.nodes[0].outputs), {}, "f"), (offer.nodes[0].name,))],
            "not an input of the group",
        ),
        # a node of another backend
        ("early", lambda offer: [Fusion(Node("fuser.NegRelu", [], [], {}, "f"), ("nope",))], "not a node placed on"),
        # one node in two fusions
        (
            "plain",
            lambda offer: [
                Fusion(
                    Node("Neg", list(offer.nodes[0].inputs), list(offer.nodes[0].outputs), {}, f),
                    (offer.nodes[0].name,),
                )
                for f in ("f1", "f2")
            ],
            "already replaced",
        ),
        ("plain", lambda offer: [Fusion(Node("Neg", [], [], {}, "f"), ())], "needs a Node"),
    ],
)
def test_unsound_fusions_are_clear_errors(register_backend, graph, propose, message):
    register_backend(FuserBackend(propose))
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    if graph == "shared":
        n = b.Neg(x)
        b.output(b.Add(b.Relu(n), n), "out")
    elif graph == "early":
        n = b.Neg(x)
        s = b.Sigmoid(n)
        b.output(b.Add(b.Relu(n), s), "out")
    else:
        b.output(b.Add(b.Relu(b.Neg(x)), x), "out")
    with pytest.raises(BackendError, match=message):
        mnn.Session(b.build(), backend="fuser")


def test_fusions_follow_sessions_that_run_a_batch_as_images(register_backend):
    register_backend(FuserBackend())
    b = mnn.GraphBuilder()
    x = b.input("x", (4, 3, 7))
    b.output(b.Add(b.Relu(b.Neg(x)), x), "out")
    xs = np.stack([X, -X, 2 * X, X - 1])
    for fuse in (True, False):
        sess = mnn.Session(b.build(), backend="fuser", threads=2, batch_parallel="on", fuse=fuse)
        np.testing.assert_array_equal(sess.run({"x": xs})["out"], np.maximum(-xs, 0) + xs)
        children = sess._split_for({"x": xs.shape}).children  # each runs one image at a time
        assert [bool(c.plan.fused) for c in children] == [fuse] * 2


def test_a_backend_whose_fuse_fails_is_named(register_backend):
    def broken(offer):
        raise KeyError("oops")

    register_backend(FuserBackend(broken))
    with pytest.raises(BackendError, match="backend fuser failed to propose fusions: KeyError"):
        mnn.Session(_graph(), backend="fuser")


def test_two_fused_nodes_with_one_name_are_an_error(register_backend):
    def twice(offer):
        return [Fusion(Node(n.op, list(n.inputs), list(n.outputs), {}, "same"), (n.name,)) for n in offer.nodes[:2]]

    register_backend(FuserBackend(twice))
    with pytest.raises(BackendError, match="two fused nodes 'same'"):
        mnn.Session(_graph(), backend="fuser")
