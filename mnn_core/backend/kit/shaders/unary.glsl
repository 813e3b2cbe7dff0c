// The body of unary.comp and unary_h.comp (included by both).
// y = f(x), element-wise: activations and unary math (codes in act.glsl).
// May run in place (x and y bound to the same memory).
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
layout(std430, binding = 1) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint total;
    int op;
    float alpha;
    float beta;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    y[i] = DATA_T(apply_act(float(x[i]), p.op, p.alpha, p.beta));
}
