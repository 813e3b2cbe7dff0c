"""A toolkit for GPU backend authors: the plain-Python arithmetic that every
compute-shader backend repeats, with no GPU API in it.

- `layout`: strides, broadcasting, collapsing dims, reduction plans
- `codes`: the op and activation codes that the shared shader sources use
  (act.glsl's codes, binary/reduce/pad modes) and fused-activation detection
- `params`: pack() for push constants / parameter buffers, and the parameter
  blocks of the shared shaders (gemm, conv, pool, reduce, pad, copy)
- `tiling`: GEMM work-group tile arithmetic
- `registry`: a kernel table with the 32-bit indexing guard
- `recorder`: grids and the float16-storage bookkeeping of a segment recorder

mnn-vulkan, mnn-metal and mnn-opengl build on it; see docs/PLUGINS.md.
"""
