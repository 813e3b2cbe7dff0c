#version 450
// gemm.comp's product (same bindings and push constants) on warp tiles (warp_tile.glsl), float32:
// 128x128, 128x64 or 64x128 blocks of C, 8x8 outputs per invocation. Global loads take 4
// neighbouring elements along whichever of the two axes is contiguous, as one 16-byte load where
// the storage buffers are bound at 16-byte boundaries (VEC) and the 4 are aligned and in range;
// else 4 scalar loads.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "gemm_warp.glsl"
