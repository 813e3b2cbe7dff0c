"""Session: correctness against numpy, plans per shape, errors, placement, memory domains."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_test_graphs import numpy_small_cnn, small_cnn

import mnn_core as mnn
from mnn_core.backend import Arena, Backend, DeviceInfo, KernelSpec, PyExecution
from mnn_core.graph.ir import TensorInfo


def test_small_cnn_matches_numpy(rng):
    graph = small_cnn(rng)
    sess = mnn.Session(graph, backend="reference")
    x = rng.standard_normal((2, 3, 8, 8)).astype("float32")
    y = sess.run({"x": x})["y"]
    np.testing.assert_allclose(y, numpy_small_cnn(graph, x), rtol=1e-4, atol=1e-4)


def test_dynamic_batch_plans_once_per_shape(rng):
    sess = mnn.Session(small_cnn(rng), backend="reference")
    for batch in (1, 3, 1, 3, 2):
        x = rng.standard_normal((batch, 3, 8, 8)).astype("float32")
        assert sess.run({"x": x})["y"].shape[0] == batch
    assert len(sess._plans) == 3  # batch 1, 3 and 2, each planned once


def test_plan_cache_reuses_arena(rng):
    sess = mnn.Session(small_cnn(rng), backend="reference")
    x = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    sess.run({"x": x})
    arena = sess._current.arenas["host"]
    sess.run({"x": rng.standard_normal((2, 3, 8, 8)).astype("float32")})
    sess.run({"x": x})
    assert sess._current.arenas["host"] is arena


def test_repeated_runs_are_independent(rng):
    sess = mnn.Session(small_cnn(rng), backend="reference")
    x1 = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    x2 = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    y1 = sess.run({"x": x1})["y"]
    sess.run({"x": x2})
    np.testing.assert_array_equal(sess.run({"x": x1})["y"], y1)


def test_copy_false_returns_views_into_session_memory(rng):
    sess = mnn.Session(small_cnn(rng), backend="reference")
    x = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    a = sess.run({"x": x}, copy=False)["y"]
    b = sess.run({"x": x}, copy=False)["y"]
    assert np.shares_memory(a, b)


@pytest.mark.parametrize(
    "feeds, message",
    [
        ({}, "missing: x"),
        ({"x": np.zeros((1, 3, 8, 8), "float32"), "z": np.zeros(1)}, "unknown: z"),
        ({"x": np.zeros((1, 4, 8, 8), "float32")}, "must have shape"),
        ({"x": np.zeros((1, 3, 8), "float32")}, "must have shape"),
        ({"x": np.zeros((1, 3, 8, 8), "int64")}, "must be float32"),
        ({"x": np.zeros((1, 3, 8, 8), "complex64")}, "must be float32"),
    ],
)
def test_bad_inputs_get_clear_errors(rng, feeds, message):
    sess = mnn.Session(small_cnn(rng), backend="reference")
    with pytest.raises(mnn.InputError, match=message):
        sess.run(feeds)


def test_float64_input_is_cast(rng):
    sess = mnn.Session(small_cnn(rng), backend="reference")
    x = rng.standard_normal((1, 3, 8, 8))
    np.testing.assert_allclose(sess.run({"x": x})["y"], sess.run({"x": x.astype("float32")})["y"])


def test_unknown_backend_names_the_installed_ones(rng):
    with pytest.raises(mnn.BackendError, match="no backend named 'nope'.*installed: .*reference"):
        mnn.Session(small_cnn(rng), backend="nope")


def test_bad_session_options(rng):
    with pytest.raises(mnn.MnnError, match="precision"):
        mnn.Session(small_cnn(rng), precision="max")
    with pytest.raises(mnn.MnnError, match="threads"):
        mnn.Session(small_cnn(rng), threads=0)


def test_introspection_before_resize_explains(rng):
    sess = mnn.Session(small_cnn(rng))
    with pytest.raises(mnn.MnnError, match="dynamic inputs"):
        _ = sess.plan


# -- backends registered for one test --------------------------------------------------


class AddOnlyBackend(Backend):
    """A real (numpy) backend that claims one op: for fallback and placement tests."""

    name = "addonly"

    def __init__(self, speed=1000.0):
        self.speed = speed

    def devices(self):
        return [DeviceInfo("numpy-add", peak_gflops=self.speed, bandwidth_gbs=self.speed, launch_us=0.01)]

    def kernels(self):
        return {"Add": KernelSpec("Add", supports=lambda n, ins: ins[0].shape == ins[1].shape or "no broadcast")}

    def prepare(self, node, ins, outs, constants, ctx):
        return PyExecution(lambda i, o: np.add(i[0], i[1], out=o[0]))


def _add_relu_graph():
    b = mnn.GraphBuilder()
    x = b.input("x", (4, 4))
    y = b.Add(x, x)
    z = b.Relu(y)
    w = b.Add(z, b.const(np.ones(4, "float32")))  # broadcast: addonly declines
    b.output(w, "out")
    return b.build()


def test_named_backend_falls_back_per_op(register_backend):
    register_backend(AddOnlyBackend())
    sess = mnn.Session(_add_relu_graph(), backend="addonly")
    placed = [(p.op, p.backend) for p in sess.plan]
    assert placed == [("Add", "addonly"), ("Relu", "reference"), ("Add", "reference")]
    assert "no broadcast" in sess.plan.placements[2].reason
    assert "no Relu kernel" in sess.plan.placements[1].reason
    x = np.arange(16, dtype="float32").reshape(4, 4) - 8
    np.testing.assert_array_equal(sess.run({"x": x})["out"], np.maximum(2 * x, 0) + 1)
    assert "addonly" in str(sess.plan)


def test_fallback_false_names_op_and_backend(register_backend):
    register_backend(AddOnlyBackend())
    with pytest.raises(mnn.UnsupportedOpError, match=r"op Relu \(node 'relu'\) cannot run on addonly"):
        mnn.Session(_add_relu_graph(), backend="addonly", fallback=False)


def test_auto_prefers_the_cheaper_backend(register_backend):
    register_backend(AddOnlyBackend(speed=1e6))
    sess = mnn.Session(_add_relu_graph(), backend="auto")
    assert sess.plan.placements[0].backend == "addonly"
    assert sess.plan.placements[0].reason.startswith("cheapest")


def test_auto_never_picks_a_slow_backend(register_backend):
    slow = type("SlowAdd", (AddOnlyBackend,), {"name": "slowadd"})(speed=1e-3)
    register_backend(slow)
    sess = mnn.Session(_add_relu_graph(), backend="auto")
    assert all(p.backend != "slowadd" for p in sess.plan)


# -- a second memory domain: copies are inserted and the device arena is planned -------


class DeviceArena(Arena):
    """Memory that is not the host arena: its own buffer, reached by read/write."""

    def __init__(self, nbytes):
        super().__init__(nbytes)
        self.buf = np.zeros(max(nbytes, 1), dtype=np.uint8)
        self.handle = self.buf.ctypes.data
        self.reads = self.writes = 0

    def write(self, offset, array):
        self.writes += 1
        self.buf[offset : offset + array.nbytes] = np.ascontiguousarray(array).view(np.uint8).reshape(-1)

    def read(self, offset, out):
        self.reads += 1
        out.reshape(-1).view(np.uint8)[:] = self.buf[offset : offset + out.nbytes]

    def view(self, offset, info: TensorInfo):
        return np.ndarray(info.shape, info.dtype, buffer=self.buf, offset=offset)


class DeviceBackend(Backend):
    name = "dev"
    memory_domain = "dev"

    def devices(self):
        return [DeviceInfo("dev0", kind="gpu", peak_gflops=1e6, bandwidth_gbs=1e6, launch_us=0.01)]

    def kernels(self):
        return {op: KernelSpec(op) for op in ("Relu", "Mul")}

    def prepare(self, node, ins, outs, constants, ctx):
        if node.op == "Relu":
            return PyExecution(lambda i, o: np.maximum(i[0], 0, out=o[0]))
        return PyExecution(lambda i, o: np.multiply(i[0], i[1], out=o[0]))

    def allocate_arena(self, nbytes):
        self.arena = DeviceArena(nbytes)
        return self.arena


def test_device_domain_gets_copies_and_its_own_arena(register_backend):
    dev = register_backend(DeviceBackend())
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 5))
    y = b.Mul(b.Relu(x), b.const(np.full((3, 5), 2.0, "float32")))  # Relu, Mul on dev
    z = b.Add(y, x)  # Add on the host (reference)
    b.output(z, "out")
    sess = mnn.Session(b.build(), backend="dev")
    assert [p.backend for p in sess.plan] == ["dev", "dev", "reference"]
    assert set(sess.memory) == {"host", "dev"}
    assert any("host->dev" in c for c in sess.plan.copies)
    assert any("dev->host" in c for c in sess.plan.copies)
    writes_after_resize = dev.arena.writes  # the constant was uploaded once, at resize
    x_val = np.linspace(-1, 1, 15, dtype="float32").reshape(3, 5)
    for _ in range(3):
        out = sess.run({"x": x_val})["out"]
    np.testing.assert_allclose(out, np.maximum(x_val, 0) * 2 + x_val)
    assert dev.arena.writes - writes_after_resize == 3  # one input copy per run, weights not re-sent


def test_python_execution_error_names_the_step(register_backend):
    class Broken(AddOnlyBackend):
        name = "broken"

        def prepare(self, node, ins, outs, constants, ctx):
            def fail(i, o):
                raise RuntimeError("device lost")

            return PyExecution(fail)

    register_backend(Broken())
    sess = mnn.Session(_add_relu_graph(), backend="broken")
    with pytest.raises(mnn.BackendError, match="step add failed: RuntimeError: device lost"):
        sess.run({"x": np.zeros((4, 4), "float32")})


class SegmentBackend(DeviceBackend):
    """Prepares runs of consecutive ops as one execution, as a GPU backend records
    one command buffer; here the 'command buffer' is a list of numpy calls."""

    name = "seg"
    memory_domain = "seg"

    def prepare_segment(self, ops, arena, ctx):
        self.segments = getattr(self, "segments", []) + [[op.node.op for op in ops]]
        calls = []
        for op in ops:
            ins = [arena.view(r.offset, r.info) if r.constant is None else r.constant for r in op.inputs]
            out = arena.view(op.outputs[0].offset, op.outputs[0].info)
            fn = np.maximum if op.node.op == "Relu" else np.multiply
            args = (ins[0], 0) if op.node.op == "Relu" else (ins[0], ins[1])
            calls.append((fn, args, out))

        def run():
            for fn, args, out in calls:
                fn(*args, out=out)

        return PyExecution(run)


def test_segments_prepare_consecutive_ops_together(register_backend):
    seg = register_backend(SegmentBackend())
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 5))
    y = b.Mul(b.Relu(x), b.const(np.full((3, 5), 3.0, "float32")))  # one segment on seg
    z = b.Add(y, x)  # host
    b.output(b.Relu(z), "out")  # a second segment
    sess = mnn.Session(b.build(), backend="seg")
    assert seg.segments == [["Relu", "Mul"], ["Relu"]]
    x_val = np.linspace(-1, 1, 15, dtype="float32").reshape(3, 5)
    np.testing.assert_allclose(sess.run({"x": x_val})["out"], np.maximum(np.maximum(x_val, 0) * 3 + x_val, 0))


def test_view_ops_need_no_kernel(register_backend):
    register_backend(AddOnlyBackend())
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 6))
    r = b.Reshape(x, shape=[3, 4])  # reads a graph input: cannot alias, the core copies
    y = b.Add(r, r)
    b.output(b.Flatten(y, axis=0), "out")  # aliases y: no step at all
    sess = mnn.Session(b.build(), backend="addonly", fallback=False)
    assert [p.backend for p in sess.plan] == ["addonly"] * 3
    assert sess.plan.elided == ["flatten"]
    x_val = np.arange(12, dtype="float32").reshape(2, 6)
    np.testing.assert_array_equal(sess.run({"x": x_val})["out"], 2 * x_val.reshape(1, 12))


def test_two_inputs_copied_to_a_device_keep_separate_memory(register_backend):
    """Both copies must stay alive until the op that reads them runs."""

    class DevMul(DeviceBackend):
        name = "devmul"
        memory_domain = "devmul"

    register_backend(DevMul())
    b = mnn.GraphBuilder()
    x, y = b.input("x", (4, 4)), b.input("y", (4, 4))
    b.output(b.Mul(x, y), "out")
    sess = mnn.Session(b.build(), backend="devmul", fallback=False)
    x_val = np.full((4, 4), 2.0, "float32")
    y_val = np.arange(16, dtype="float32").reshape(4, 4)
    np.testing.assert_array_equal(sess.run({"x": x_val, "y": y_val})["out"], x_val * y_val)


def test_auto_with_a_device_backend_and_an_absent_optional_input(register_backend):
    class DevConv(DeviceBackend):
        name = "devconv"
        memory_domain = "devconv"

        def kernels(self):
            return {"Relu": KernelSpec("Relu")}

    register_backend(DevConv())
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 2, 4, 4))
    y = b.Conv(x, b.const(np.ones((2, 2, 1, 1), "float32")), None)  # no bias: input ""
    b.output(b.Relu(b.Neg(y)), "out")
    sess = mnn.Session(b.build(), backend="auto", optimize=False)
    assert sess.run({"x": np.ones((1, 2, 4, 4), "float32")})["out"].max() == 0


def test_which_arrays_steps_may_read_in_place():
    """run() hands a movable input's steps the caller's array only where they can read it as it is:
    float32 for a float32 input, C order, aligned to its element, and not inside the arena, which
    the steps overwrite (an output of the last run fed back as an input)."""
    from mnn_core.session import _readable_in_place

    arena = np.zeros(4096, np.uint8)
    x = np.ones((4, 8), np.float32)
    f32 = np.dtype(np.float32)
    assert _readable_in_place(x, f32, arena)
    assert _readable_in_place(x, f32, None)
    assert _readable_in_place(np.empty(33, np.float32)[1:].reshape(4, 8), f32, arena)  # 4-byte aligned
    assert not _readable_in_place(x.astype(np.float64), f32, arena)
    assert not _readable_in_place(np.asfortranarray(x), f32, arena)
    assert not _readable_in_place(x[:, ::2], f32, arena)
    assert not _readable_in_place(
        np.frombuffer(bytes(129), np.uint8)[1:].view(np.float32).reshape(4, 8), f32, arena
    )  # not aligned to its element
    assert not _readable_in_place(arena[64:192].view(np.float32).reshape(4, 8), f32, arena)


def test_a_program_moves_only_movable_inputs(rng):
    """Program.run(moved=...) refuses an address for an input whose readers did not allow it (the
    reference backend's Python executions read the arena's copy) before touching any descriptor, so
    the next run is still right."""
    graph = small_cnn(rng, batch=2)
    sess = mnn.Session(graph, backend="reference")
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = sess.run({"x": x})
    program = sess._current.program
    assert program.movable == (False,)
    with pytest.raises(ValueError, match="not movable"):
        program.run(False, (x.ctypes.data,))
    with pytest.raises(ValueError, match="1 inputs"):
        program.run(False, ())
    for name, got in sess.run({"x": x}).items():
        np.testing.assert_array_equal(got, want[name])
