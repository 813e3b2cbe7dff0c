#version 450
#extension GL_GOOGLE_include_directive : require
// y = f(x), element-wise: activations and unary math (codes in act.glsl).
// May run in place (x and y bound to the same memory).
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint total;
    int op;
    float alpha;
    float beta;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    y[i] = apply_act(x[i], p.op, p.alpha, p.beta);
}
