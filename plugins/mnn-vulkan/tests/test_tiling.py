"""The tiling a GPU picks per layer (kernels/matmul.py), checked without a device: the rule
measured on the H200 (benchmarks/h200_sweep.sh) and its session-option overrides."""

from __future__ import annotations

from types import SimpleNamespace

from mnn_vulkan.kernels.matmul import BIG, GPU_WAVE, MID, WIDE, gemm_tiles, split_k

GPU = SimpleNamespace(type="discrete")
CPU = SimpleNamespace(type="cpu")


def test_convolutions_take_4x4_tiles_where_they_fill_the_gpu():
    # ResNet-18 batch 16, a 56x56x64 3x3 layer: 64x64 blocks of 4x4 outputs
    assert gemm_tiles(GPU, 64, 16 * 56 * 56, 1, k=576)[:2] == BIG
    # a 1x1 convolution or MatMul (no k: the GEMM shader) keeps 32x64 blocks of 2x4
    assert gemm_tiles(GPU, 64, 16 * 56 * 56, 1)[:2] == WIDE
    # batch 1, a 7x7x512 layer: 8 blocks of 64x64 are too few even split 16 ways; 32x64 do
    assert gemm_tiles(GPU, 512, 49, 1, k=4608)[:2] == WIDE
    # 28x28x256 with K = 256: 104 blocks of 32x64 in 2 slices of 128; kept whole (slices of at
    # least 256) 200 blocks of 32x32
    assert gemm_tiles(GPU, 256, 784, 1, k=256)[:2] == WIDE
    assert gemm_tiles(GPU, 256, 784, 1, {"vulkan.splitk_min": 256}, k=256)[:2] == MID


def test_split_k_fills_a_wave_of_work_groups():
    # 104 blocks of a 7x7x512 batch-16 layer, K = 4608: about GPU_WAVE groups after splitting
    splits = split_k(GPU, 104, 4608, {})
    assert splits > 1 and 104 * splits >= GPU_WAVE and 104 * (splits - 1) < GPU_WAVE
    assert split_k(GPU, GPU_WAVE, 4608, {}) == 1 and split_k(GPU, 0, 4608, {}) == 1
    assert split_k(GPU, 8, 300, {}) == 2  # each slice keeps at least 128 of K
    assert split_k(GPU, 8, 200, {}) == 1
    assert split_k(GPU, 8, 300, {"vulkan.splitk_min": 256}) == 1  # unless a sweep asks for more
    assert split_k(CPU, 8, 4608, {}) == 1


def test_the_rule_can_be_overridden_for_sweeps():
    options = {"vulkan.gpu_tilings": "wide,one", "vulkan.gpu_wave": 264}
    assert gemm_tiles(GPU, 64, 16 * 56 * 56, 1, options, k=576)[:2] == WIDE
    assert split_k(GPU, 104, 4608, options) == 3
    assert gemm_tiles(GPU, 64, 3136, 1, {"vulkan.gpu_tilings": "16x16x4x8x16"}, k=576)[:2] == ((16, 16, 1), (4, 8, 16))


def test_a_device_that_counts_its_sms_scales_the_rule():
    # VK_NV_shader_sm_builtins: an H100 reports 132 (the rule as measured), a 66-SM GPU half the groups
    h100 = SimpleNamespace(type="discrete", props={"sm_count": 132})
    small = SimpleNamespace(type="discrete", props={"sm_count": 66})
    assert split_k(h100, 104, 4608, {}) == split_k(GPU, 104, 4608, {})
    assert 104 * split_k(small, 104, 4608, {}) >= GPU_WAVE // 2 > 104 * (split_k(small, 104, 4608, {}) - 1)
    # 28x28x256, K = 256 kept whole: 104 blocks of 32x64 are too few for 132 SMs, enough for 66
    whole = {"vulkan.splitk_min": 256}
    assert gemm_tiles(h100, 256, 784, 1, whole, k=256)[:2] == MID
    assert gemm_tiles(small, 256, 784, 1, whole, k=256)[:2] == WIDE
