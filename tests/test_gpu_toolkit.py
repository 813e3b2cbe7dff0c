"""mnn_core.backend.kit (formerly mnn_core.gpu), the API-free toolkit the GPU backends share: strides and collapsing
checked by walking real numpy arrays with them, parameter blocks by their bytes."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import numpy as np
import pytest

from mnn_core.gpu import codes, layout, params, recorder, registry, tiling


def _walk(dims, strides):
    """Every flat offset a kernel visits for (collapsed) dims and element strides, in order."""
    offsets = np.zeros([1], dtype=np.int64)
    for d, s in zip(dims, strides):
        offsets = (offsets[:, None] + np.arange(d) * s).reshape(-1)
    return offsets


@pytest.mark.parametrize(
    "out,a,b",
    [
        ((2, 3, 4), (2, 3, 4), (4,)),
        ((5, 1, 7), (5, 1, 7), (1, 1, 1)),
        ((3, 4, 5, 6), (3, 1, 5, 1), (4, 1, 6)),
        ((1,), (1,), (1,)),
    ],
)
def test_broadcast_plan_visits_the_numpy_broadcast(out, a, b):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(a), rng.standard_normal(b)
    dims, (sa, sb) = layout.broadcast_plan(out, a, b)
    assert len(dims) <= len(out)
    got = x.reshape(-1)[_walk(dims, sa)] + y.reshape(-1)[_walk(dims, sb)]
    np.testing.assert_array_equal(got, (x + y).reshape(-1))


def test_collapse_merges_contiguous_dims_only():
    assert layout.collapse([2, 3, 4], [12, 4, 1]) == ([24], [[1]])
    assert layout.collapse([2, 1, 3], [3, 3, 1], [1, 1, 2]) == ([2, 3], [[3, 1], [1, 2]])
    assert layout.collapse([1, 1], [1, 1]) == ([], [[]])
    assert layout.contiguous_strides((2, 3, 5)) == [15, 5, 1]
    assert layout.cdiv(7, 2) == 4 and layout.numel(()) == 1 and layout.pad6([1, 2], 9) == [1, 2, 9, 9, 9, 9]


@pytest.mark.parametrize("shape,axes", [((2, 3, 4), [1]), ((2, 3, 4, 5), [0, 2]), ((6, 7), [])])
def test_reduce_plan_visits_each_row(shape, axes):
    x = np.random.default_rng(1).standard_normal(shape)
    (kd, ks), (rd, rs) = layout.reduce_plan("ReduceSum", shape, {"axes": axes, "noop_with_empty_axes": 0})
    rows = x.reshape(-1)[_walk(kd, ks)[:, None] + _walk(rd, rs)[None, :]].sum(axis=1)
    np.testing.assert_allclose(rows, x.sum(axis=tuple(axes) or None).reshape(-1))


def test_copy_params_moves_int64_as_two_words_and_refuses_too_many_dims():
    blob, total = params.copy_params((3, 4), [1, 3], [4, 1], words=2)  # a transpose of int64
    assert total == 24
    words = struct.unpack("<22I", blob)
    assert words[:2] == (24, 3) and words[4:7] == (3, 4, 2)
    with pytest.raises(ValueError, match="max 6"):
        params.copy_params((2,) * 7, [64, 1, 2, 4, 8, 16, 32], layout.contiguous_strides((2,) * 7))


def test_pack_signs_and_floats():
    assert params.pack(1, -1, [2, 3], 0.5) == struct.pack("<IiIIf", 1, -1, 2, 3, 0.5)


def test_gemm_operands_of_transposed_gemm_with_row_bias():
    m, n, k, a_st, b_st, bias_st = params.gemm_operands({"transA": 1, "transB": 0}, (5, 3), (1, 4), (3, 4))
    assert (m, n, k) == (3, 4, 5) and a_st == (1, 3, 0, 0) and b_st == (4, 1, 0, 0) and bias_st == (0, 1, 0, 0)


def test_k_table_offsets():
    table = params.k_table(2, 2, 2, 1, 1, 5, 5).reshape(-1, 3)
    assert table.shape == (8, 3)
    assert table[-1].tolist() == [1 * 25 + 1 * 5 + 1, 1, 1]


def test_busiest_tile_takes_the_first_that_fills_else_the_most():
    big, small = ((16, 16, 1), (4, 4, 16)), ((8, 8, 1), (1, 1, 16))
    assert tiling.blocks(*big) == (64, 64)
    assert tiling.busiest_tile(1024, 1024, 1, (big, small), enough=300) == (small[0], small[1], (8, 8))
    assert tiling.busiest_tile(1024, 1024, 1, (big, small), enough=100) == (big[0], big[1], (64, 64))
    assert tiling.busiest_tile(64, 64, 1, (big, small), enough=10**6, more=lambda g: 2)[2] == (8, 8)


def test_grids_cover_every_invocation():
    gx, gy, _ = recorder.linear_groups(recorder.MAX_GROUPS * 256 + 1, 256)
    assert gx == recorder.MAX_GROUPS and gx * gy * 256 >= recorder.MAX_GROUPS * 256 + 1
    assert recorder.linear_groups(0, 64) == (0, 0, 1) and recorder.row_groups(3) == (3, 1, 1)


def _ref(name, dtype="float32", shape=(4,), offset=0):
    return SimpleNamespace(name=name, offset=offset, info=SimpleNamespace(dtype=dtype, shape=shape))


def _op(op, ins, outs, **attrs):
    return SimpleNamespace(node=SimpleNamespace(op=op, attrs=attrs), inputs=ins, outputs=outs)


def test_fused_activation_only_in_place_on_the_binary_result():
    add = _op("Add", [_ref("a"), _ref("b")], [_ref("s")])
    assert codes.fused_activation(add, _op("LeakyRelu", [_ref("s")], [_ref("t")], alpha=0.1)) == (3, 0.1, 0.0)
    assert codes.fused_activation(add, _op("Exp", [_ref("s")], [_ref("t")])) is None  # not fusable
    assert codes.fused_activation(add, _op("Relu", [_ref("s")], [_ref("t", offset=64)])) is None  # not in place
    assert codes.fused_activation(add, None) is None
    assert codes.unary_code("Clip", {"min": -1.0, "max": 6.0}) == (2, -1.0, 6.0)


def test_kernel_table_declines_what_the_shaders_cannot_address():
    table = registry.KernelTable(100, lambda info: "too wide" if info.nbytes > 200 else None)
    table.register("Relu", lambda op, rec: None, supports=lambda node, ins: "only on Tuesdays")
    check = table["Relu"].spec.supports
    assert "exceeds the 32-bit indexing of the shaders" in check(None, [SimpleNamespace(size=101, nbytes=4)])
    assert check(None, [SimpleNamespace(size=60, nbytes=240)]) == "too wide"
    assert check(None, [None, SimpleNamespace(size=10, nbytes=40)]) == "only on Tuesdays"


class _ListRecorder(recorder.SegmentRecorder):
    def __init__(self, half):
        super().__init__({}, half, {"Conv"}, "test.fp16_fma", "MNN_TEST_FP16_FMA")
        self.dispatches = []

    def dispatch(self, shader, bindings, params, groups, local=(256, 1, 1), spec=()):
        self.dispatches.append((self.variant(shader, {"conv2d"}, set()), bindings))


def _tensor(offset, size):
    return SimpleNamespace(offset=offset, info=SimpleNamespace(dtype="float32", size=size, nbytes=4 * size))


def test_segment_recorder_widens_and_narrows_around_ops_without_float16_shaders():
    rec = _ListRecorder(half=True)
    x, y = _tensor(0, 10), _tensor(64, 10)
    rec.begin_op("Softmax")  # no float16 shaders: float32 copies in WIDE
    ins, out = rec.tensor(x), rec.output(y)
    assert rec.tensor(x) is ins and ins.buffer == out.buffer == recorder.WIDE and ins.nbytes == 40
    rec.dispatch("softmax", [ins, out], b"", (1, 1, 1))
    rec.end_op()
    assert [d[0] for d in rec.dispatches] == ["widen", "softmax", "narrow"]
    assert rec.dispatches[0][1][0].nbytes == 20  # 10 float16 values, in whole words
    assert rec.widened_ops == [""] and rec.wide_bytes == 2 * recorder.ALIGN
    rec.begin_op("Conv")  # float16 shaders: the arena directly, the _h variant
    assert rec.tensor(x).buffer == "arena"
    rec.dispatch("conv2d", [rec.tensor(x)], b"", (1, 1, 1))
    assert rec.dispatches[-1][0] == "conv2d_h"


def test_segment_recorder_constants_are_aligned():
    rec = _ListRecorder(half=False)
    a, b = rec.constant(np.arange(3, dtype=np.int32)), rec.constant(np.ones(2, np.float32))
    assert (a.offset, a.nbytes, b.offset) == (0, 12, recorder.ALIGN) and rec.const_bytes == 2 * recorder.ALIGN
    assert rec.scratch(100, True).nbytes == 100 and rec.scratch(50, False).offset == 0 and rec.scratch_bytes == 100


def _run_copy(src, dst, shape, src_strides, dst_strides, src_off, dst_off):
    """What copy.comp does with one (shape, strides, offsets) copy, on flat numpy arrays."""
    dst[dst_off + _walk(shape, dst_strides)] = src[src_off + _walk(shape, src_strides)]


def test_movement_copies_match_numpy():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 5))
    out = np.zeros(60)
    _run_copy(x.reshape(-1), out, *layout.transpose_copy(x.shape, (2, 0, 1)))
    np.testing.assert_array_equal(out, x.transpose(2, 0, 1).reshape(-1))
    parts = [rng.standard_normal((3, n, 5)) for n in (1, 4, 2)]
    out = np.zeros(3 * 7 * 5)
    for part, plan in zip(parts, layout.concat_copies((3, 7, 5), [p.shape for p in parts], 1)):
        _run_copy(part.reshape(-1), out, *plan)
    np.testing.assert_array_equal(out, np.concatenate(parts, axis=1).reshape(-1))
    for piece, plan in zip(np.split(x, [2], axis=2), layout.split_copies(x.shape, [(3, 4, 2), (3, 4, 3)], 2)):
        got = np.zeros(piece.size)
        _run_copy(x.reshape(-1), got, *plan)
        np.testing.assert_array_equal(got, piece.reshape(-1))
    attrs = {"starts": [3, 0], "ends": [0, 5], "axes": [1, 2], "steps": [-2, 2]}
    out_shape = layout.slice_copy(x.shape, attrs)[0]
    got = np.zeros(int(np.prod(out_shape)))
    _run_copy(x.reshape(-1), got, *layout.slice_copy(x.shape, attrs))
    np.testing.assert_array_equal(got, x[:, 3:0:-2, 0:5:2].reshape(-1))


def test_fuse_activations_leaves_out_the_fused_op():
    add = _op("Add", [_ref("a"), _ref("b")], [_ref("s")])
    relu = _op("Relu", [_ref("s")], [_ref("t")])
    exp = _op("Exp", [_ref("t")], [_ref("u")])
    assert [(op.node.op, act) for op, act in codes.fuse_activations([add, relu, exp])] == [
        ("Add", (1, 0.0, 0.0)),
        ("Exp", None),
    ]


def test_copy_words_and_record_copy_pick_the_half_copy_for_float16_tensors():
    long = SimpleNamespace(offset=0, info=SimpleNamespace(dtype="int64", size=3, nbytes=24))
    assert recorder.copy_words(long) == 2 and recorder.copy_words(_tensor(0, 5)) == 1
    rec = _ListRecorder(half=True)
    rec.begin_op("Conv")  # native: the float16 tensor moves as 16-bit elements
    assert recorder.copy_words(_tensor(0, 5), rec) == recorder.HALF
    recorder.record_copy(rec, "src", "dst", (5,), [1], [1], words=recorder.HALF)
    assert rec.dispatches[-1][0] == "copy_h"
