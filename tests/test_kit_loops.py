"""mnn_core.backend.kit.loops: the software drivers' loop budget, without a device."""

from types import SimpleNamespace

from mnn_core.backend.kit.loops import LLVMPIPE_LOOP_PASSES, MARGIN, LoopBudget, budget_of, group_passes, group_size


def test_only_llvmpipe_and_lavapipe_have_a_budget():
    assert budget_of("llvmpipe (LLVM 15.0.6, 256 bits)") == LLVMPIPE_LOOP_PASSES - MARGIN
    assert budget_of("NVIDIA H200") is None
    assert budget_of("") is None and budget_of(None) is None


def test_a_long_loop_is_shared_by_a_group_that_keeps_each_invocation_short():
    assert group_size(4096) == 1 and group_passes(4096) == 4096
    assert group_size(4097) == 64 and group_passes(4097) == 65
    assert group_size(64 * 4096 + 1) == 256 and group_passes(70001, 3) == 3 * 1094


def test_budgeted_declines_past_the_budget_with_the_count_and_only_there():
    node = SimpleNamespace(op="MaxPool")
    on_cpu, on_gpu = LoopBudget(lambda: "llvmpipe (LLVM 15)"), LoopBudget(lambda: "NVIDIA H100")
    passes = lambda node, ins: ins[0]  # noqa: E731
    assert on_cpu.budgeted(None, passes)(node, [64511]) is True
    reason = on_cpu.budgeted(None, passes)(node, [64512])
    assert reason.startswith("this MaxPool takes 64512 loop passes in one invocation, past llvmpipe's 65535")
    assert on_gpu.budgeted(None, passes)(node, [10**9]) is True
    assert on_cpu.budgeted(lambda node, ins: "rank 3", passes)(node, [10**9]) == "rank 3"


def test_no_device_means_no_budget():
    from mnn_core.errors import BackendError

    def no_device():
        raise BackendError("no renderer here")

    assert LoopBudget(no_device).passes() is None
    assert LoopBudget(no_device).within(10**9, "this MatMul") is True


def test_the_kits_ops_whose_loops_follow_the_data_are_declined_past_the_budget():
    from mnn_core.backend.kit import ml, quant

    on_cpu = LoopBudget(lambda: "llvmpipe (LLVM 15)")
    matmul_int = on_cpu.budgeted(*quant.LOOPED["MatMulInteger"])
    node = SimpleNamespace(op="MatMulInteger")
    tall = [SimpleNamespace(shape=(1, 70001), dtype="uint8"), SimpleNamespace(shape=(70001, 2), dtype="uint8")]
    assert matmul_int(node, tall).startswith("this MatMulInteger takes 70017 loop passes")
    short = [SimpleNamespace(shape=(3, 9), dtype="int8"), SimpleNamespace(shape=(9, 5), dtype="int8")]
    assert matmul_int(node, short) is True
    normalizer = on_cpu.budgeted(*ml.LOOPED["Normalizer"])
    node = SimpleNamespace(op="Normalizer")
    assert normalizer(node, [SimpleNamespace(shape=(2, 40000), dtype="float32")]).startswith(
        "this Normalizer takes 80016"
    )
    assert normalizer(node, [SimpleNamespace(shape=(2, 31), dtype="float32")]) is True
