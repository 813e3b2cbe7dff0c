// The body of splitk_reduce.comp and splitk_reduce_h.comp (included by both).
// The second pass of a split-K convolution: y = act(sum of the ksplit partial
// results + bias[channel]), one invocation per output element.
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 0) readonly buffer Partial { float partial[]; };
layout(std430, binding = 1) readonly buffer Bias { DATA_T bias[]; };
layout(std430, binding = 2) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint total, ksplit, inner, C;  // channel = (i / inner) % C
    uint has_bias;
    int act;
    float act_a, act_b;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    float v = p.has_bias != 0 ? float(bias[(i / p.inner) % p.C]) : 0.0;
    for (uint s = 0; s < p.ksplit; ++s) v += partial[s * p.total + i];
    y[i] = DATA_T(apply_act(v, p.act, p.act_a, p.act_b));
}
