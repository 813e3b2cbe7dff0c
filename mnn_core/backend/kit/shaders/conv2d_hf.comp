#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// conv2d.comp on float16 tensors (precision="low" on a device with shaderFloat16 and
// 16-bit storage): see common.glsl.
#define MNN_HALF 1
#define MNN_HALF_FMA 1  // float16 FMAs (see tile.glsl, conv_dw.glsl)
#include "conv2d.glsl"
