"""What every backend repeats, written once: plain-Python arithmetic with no device API in it.

- `activation`: the fused-activation codes (abi.h's enum mnn_activation) and `activation_code`
- `layout`: strides, broadcasting, collapsing dims (`collapse_broadcast` for a binary kernel),
  reduction plans, data movement as strided copies
- `codes`: the op codes the shared shader sources switch on (act.glsl, binary, reduce, pad) and
  fused-activation detection in a GPU segment
- `params`: pack() for push constants / parameter buffers, and the parameter blocks of the
  shared shaders (gemm, conv, pool, reduce, pad, copy)
- `window`: the fields of a CPU kernel's 2-D convolution or pooling window, and an average
  pooling's divisors per output row and column
- `tiling`: GEMM work-group tile arithmetic
- `gpu_kernels`: the kernel table of a shader backend (the 32-bit indexing guard)
- `recorder`: grids and the float16-storage bookkeeping of a segment recorder
- `shader_ops`: the ops that are one dispatch of a shared shader (binary, unary, pool, reduce,
  views, Concat, Pad), recorded alike by every API that runs those shaders
- `weights`: `checksum`, to tell whether a weight packed before has changed
- `spirv`: the shared compute shaders (GLSL in `shaders/`, committed SPIR-V and its lock) that
  mnn-vulkan runs and mnn-metal translates to MSL

mnn-x86 and mnn-arm use `activation`, `layout` and `window`; mnn-vulkan, mnn-metal and mnn-opengl build
on all of it; see docs/PLUGINS.md. Importing the kit loads neither a device API nor the engine.
"""
