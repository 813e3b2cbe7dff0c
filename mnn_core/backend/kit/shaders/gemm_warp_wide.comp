#version 450
// gemm_warp.comp with wide warp tiles (WARP_WIDE in warp_tile.glsl): each warp 32 x 128 outputs, each
// invocation 8x16, so 6 shared vec4 reads per k feed 128 FMAs (4 and 64 in gemm_warp.comp); 128x128
// blocks of 4 warps, or 256x128 / 128x256 of 8.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#define WARP_WIDE
#include "gemm_warp.glsl"
