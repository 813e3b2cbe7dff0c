#version 450
// A transposing copy of 32-bit words through 32x32 tiles in shared memory (copy_tile.glsl).
#extension GL_GOOGLE_include_directive : require
#include "copy_tile.glsl"
