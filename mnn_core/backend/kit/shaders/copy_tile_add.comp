#version 450
// copy_tile_t.comp's transposing copy of floats, each added to the same element of a third tensor laid
// out as the destination (copy_tile.glsl with TILE_ADD).
#extension GL_GOOGLE_include_directive : require
#define TILE_ADD
#include "copy_tile.glsl"
