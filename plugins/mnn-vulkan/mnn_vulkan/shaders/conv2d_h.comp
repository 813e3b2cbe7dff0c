#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// conv2d.comp with its weights stored as float16 (precision="low" on a device with
// shaderFloat16 and 16-bit storage): half the weight memory and traffic; every
// product and sum stays float32.
#define WEIGHT_T float16_t
#include "conv2d.glsl"
