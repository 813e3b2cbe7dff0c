#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// copy.comp on float16 tensors: the same strided copy, of 16-bit elements.
#define COPY_T float16_t
#include "copy.glsl"
