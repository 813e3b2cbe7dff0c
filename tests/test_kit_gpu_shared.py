"""The backend kit's pieces that mnn-opengl and mnn-vulkan share: codes and checks of the bool ops,
the index kernels' checks, Tile as a copy, the binary-op registration, the recurrent op plan."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from mnn_core.backend.kit import codes, deconv, gather, layout, logic, rnn
from mnn_core.backend.kit.gpu_kernels import GpuKernelTable
from mnn_core.graph.ir import Node, TensorInfo


def _info(shape, dtype="float32"):
    return TensorInfo(tuple(shape), dtype)


def test_tile_plan_repeats_the_input_along_each_new_dim():
    x = np.arange(6).reshape(2, 3)
    view, src, dst = layout.tile_plan(x.shape, (2, 3))
    out = np.empty(2 * 2 * 3 * 3, x.dtype)
    for idx in np.ndindex(*view):
        out[np.dot(idx, dst)] = x.reshape(-1)[np.dot(idx, src)]
    np.testing.assert_array_equal(out.reshape(4, 9), np.tile(x, (2, 3)))


def test_compare_codes_and_isinf_variants():
    assert logic.compare_code(Node("Less", ["a", "b"], ["y"])) == 1
    codes_ = {
        (1, 1): 12,
        (1, 0): 10,
        (0, 1): 11,
        (0, 0): 13,
    }
    for (pos, neg), code in codes_.items():
        node = Node("IsInf", ["x"], ["y"], {"detect_positive": pos, "detect_negative": neg})
        assert logic.compare_code(node) == code
    assert logic.isinf_code({}) == 12


def test_logic_checks_name_what_they_decline():
    node = Node("Where", ["c", "a", "b"], ["y"])
    assert logic.where_supports(node, [_info((2, 3), "bool"), _info((2, 3)), _info((1, 3))]) is True
    assert "bool condition" in logic.where_supports(node, [_info((2,)), _info((2,)), _info((2,))])
    seven = [_info((2,) * 7), _info((2, 1) * 3 + (2,))]
    assert "max 6" in logic.broadcast_supports(Node("Equal", ["a", "b"], ["y"]), seven)
    cast = Node("Cast", ["x"], ["y"], {"to": "float16"})
    assert "not float32 to float16" in logic.cast_supports(cast, [_info((2,))])
    assert logic.float_only(Node("IsNaN", ["x"], ["y"]), [_info((2,), "int32")]) == "float32 input only, got int32"


def test_index_checks():
    node = Node("GatherND", ["d", "i"], ["y"])
    assert gather.gather_nd_supports(node, [_info((2, 3)), _info((4, 2), "int64")]) is True
    assert "max 8" in gather.gather_nd_supports(node, [_info((2,) * 9), _info((1, 9), "int32")])
    assert "int32/int64 indices" in gather.gather_nd_supports(node, [_info((2,)), _info((1, 1))])
    assert "int64/int32 indices" in gather.indices_supports(node, [_info((2,)), _info((1,))])
    assert "float32 indices" in gather.onehot_supports(node, [_info((2,), "uint8")])


def test_reduce_ops_are_the_reductions_with_their_modes():
    assert codes.REDUCE_OPS["ReduceSumSquare"] == 6
    assert codes.REDUCE_OPS["ReduceMean"] == codes.REDUCE["ReduceMean"]
    assert not any(op.startswith("Global") for op in codes.REDUCE_OPS)


def test_register_binary_registers_every_binary_op():
    table = GpuKernelTable(1 << 20)
    table.register_binary(lambda op, rec: None)
    assert set(codes.BINARY) <= set(table)
    assert table["PRelu"].spec.inplace and not table["Add"].spec.inplace
    assert "int64" in table["Add"].spec.dtypes


def test_deconv_supports_ranks():
    node = Node("ConvTranspose", ["x", "w"], ["y"])
    assert deconv.deconv_supports(node, [_info((1, 2, 5)), _info((2, 3, 3))]) is True
    assert "rank 5" in deconv.deconv_supports(node, [_info((1, 2, 3, 4, 5)), _info((2, 3, 3, 3, 3))])


def test_rnn_op_plan_pads_operands_and_skips_empty_sequences():
    def op(t):
        infos = [_info((t, 1, 3)), _info((1, 4, 3)), _info((1, 4, 4))]
        refs = [SimpleNamespace(info=i) for i in infos]
        return SimpleNamespace(
            node=Node("RNN", ["x", "w", "r"], ["y"], {"hidden_size": 4}), inputs=refs, outputs=[None]
        )

    plan, ins, outs = rnn.rnn_op_plan(op(2))
    assert (plan.T, plan.H, len(ins), len(outs)) == (2, 4, 8, 3)
    assert rnn.rnn_op_plan(op(0)) is None


def test_gather_nd_fields_count_words_or_bytes():
    head, tail, invocations = gather.gather_nd_fields(_info((2, 3, 4), "int64"), _info((5, 2), "int32"), 5 * 4, 0)
    assert head == [40, 8, 2, 5, 0, 0, 0]  # 2 words an int64, 4-element slices
    assert tail == [[2, 3, 1, 1, 1, 1, 1, 1], [24, 8, 0, 0, 0, 0, 0, 0]] and invocations == 40
    head, _, invocations = gather.gather_nd_fields(_info((6, 4), "uint8"), _info((3, 1), "int64"), 12, 0)
    assert head[:2] == [12, 4] and head[5:] == [1, 1] and invocations == 3  # four bytes an invocation


def test_gather_elements_fields():
    head, tail = gather.gather_elements_fields(_info((3, 4)), _info((2, 4), "int64"), 8, -2)
    assert head == [8, 2, 0, 1, 3, 1]
    assert tail == [[2, 4, 1, 1, 1, 1], [4, 1, 0, 0, 0, 0]]


def test_register_views_takes_words_and_bytes():
    table = GpuKernelTable(1 << 20)
    table.register_views(lambda op, rec: None, ("bool",))
    assert table["Reshape"].spec.inplace and not table["Identity"].spec.inplace
    assert set(table["Squeeze"].spec.dtypes) == {"float32", "int32", "int64", "bool"}
