#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// norm_rows.comp on float16 tensors (precision="low" on a device with shaderFloat16 and
// 16-bit storage): see common.glsl.
#define MNN_HALF 1
#include "norm_rows.glsl"
