"""The core's conformance suite for every op the vulkan backend claims, against
the numpy reference (fp32: rtol 1e-4, atol 1e-5), with the Khronos validation
layer on when it is installed (conftest.py fails a test on any error)."""

from mnn_core.testing import BackendConformance


class TestVulkanConformance(BackendConformance):
    backend = "vulkan"
    rtol = 1e-4
    atol = 1e-5


class TestVulkanConformanceStaging(BackendConformance):
    """The same ops with host copies through the staging buffer, as on a discrete GPU."""

    backend = "vulkan"
    options = {"vulkan.staging": True}
    ops = ("Conv", "MatMul", "Add", "Concat", "Softmax")


class TestVulkanConformanceTiles(BackendConformance):
    """The GEMM tilings a GPU picks (128x128 and 64x64 blocks), forced here."""

    backend = "vulkan"
    options = {"vulkan.tiles": "huge"}
    ops = ("Conv", "MatMul", "Gemm")


class TestVulkanConformanceBigTiles(BackendConformance):
    backend = "vulkan"
    options = {"vulkan.tiles": "big"}
    ops = ("Conv", "MatMul", "Gemm")


class TestVulkanConformanceSplitK(BackendConformance):
    """Split-K convolution (a GPU's choice for small outputs), forced into 3 slices."""

    backend = "vulkan"
    options = {"vulkan.splitk": 3}
    ops = ("Conv",)


class TestVulkanConformanceMidTiles(BackendConformance):
    """32x32 blocks of 256 invocations (2x2 outputs each): a GPU's smallest tiling."""

    backend = "vulkan"
    options = {"vulkan.tiles": "mid"}
    ops = ("Conv", "MatMul", "Gemm")


class TestVulkanConformanceGpuChoices(BackendConformance):
    """Tiling and split-K chosen as on a discrete GPU (what the H200 runs), on any
    device: empty batches, tiny outputs split along K, the tilings by size."""

    backend = "vulkan"
    options = {"vulkan.gpu_tiling": True}
    ops = ("Conv", "MatMul", "Gemm")


class TestVulkanConformanceWideTiles(BackendConformance):
    """32x64 blocks, 2x4 outputs per invocation (a GPU's choice for mid-sized layers)."""

    backend = "vulkan"
    options = {"vulkan.tiles": "wide"}
    ops = ("Conv", "MatMul", "Gemm")


class TestVulkanConformanceOneTiles(BackendConformance):
    """16x16 blocks, one output per invocation (a GPU's choice for the smallest layers)."""

    backend = "vulkan"
    options = {"vulkan.tiles": "one"}
    ops = ("Conv", "MatMul", "Gemm")


class TestVulkanConformanceGemv(BackendConformance):
    """gemv.comp (one work group per output column) forced wherever A has at most 8 rows."""

    backend = "vulkan"
    options = {"vulkan.gemv": True}
    ops = ("MatMul", "Gemm")
