#version 450
// Depthwise 7x7 convolutions of stride 1 and dilation 1 (ConvNeXt's), float32: conv_dw.comp's bindings
// and push constants, each invocation 7 outputs down one column (conv_dw_strip.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#define KS 7
#define ROWS 7
#include "conv_dw_strip.glsl"
