#version 450
// gemm_warp.comp with 96-wide warp tiles (WARP_N96 in warp_tile.glsl): each warp 32 x 96 outputs, each
// invocation 8x12 (5 shared vec4 reads per k for 96 FMAs); 128x96 blocks of 4 warps, 128x192 of 8: an
// output 96 or 192 wide (ConvNeXt's MLP down projections) fills them, where 128-wide blocks waste a quarter.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#define WARP_N96
#include "gemm_warp.glsl"
