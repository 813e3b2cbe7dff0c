#version 450
// LayerNormalization of contiguous rows of L elements, each read from memory once: a work group
// per row, each invocation holding up to PER of its elements in registers (elements lid,
// lid + NT, ...), the mean and then the (biased) variance of those registers summed per subgroup
// (subgroupAdd) and across subgroups through shared memory. With has_x2 the row is the sum of
// two tensors (a residual Add fused in front), which is also stored to S when store_sum is set
// (for the Add's other readers). mnn-vulkan's vulkan.AddLayerNorm and plain LayerNormalization.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(constant_id = 3) const uint PER = 4;

layout(std430, binding = 0) readonly buffer X1 { float x1[]; };
layout(std430, binding = 1) readonly buffer X2 { float x2[]; };
layout(std430, binding = 2) readonly buffer Scale { float scale[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(std430, binding = 5) writeonly buffer S { float s[]; };

layout(push_constant) uniform Params {
    uint rows, L;
    float eps;
    uint has_x2, has_scale, has_bias, store_sum;
} p;

const uint NT = gl_WorkGroupSize.x;
shared float part[NT];  // one per subgroup (at least 1 invocation each)

float group_sum(float v) {
    v = subgroupAdd(v);
    if (subgroupElect()) part[gl_SubgroupID] = v;
    barrier();
    float total = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) total += part[i];
    barrier();  // part[] is reused by the next sum
    return total;
}

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= p.rows) return;  // the whole group: no barrier is left waiting
    uint lid = gl_LocalInvocationID.x;
    uint base = row * p.L;
    float v[PER];
    float sum = 0.0;
    [[unroll]] for (uint r = 0; r < PER; ++r) {
        uint j = lid + r * NT;
        v[r] = 0.0;
        if (j < p.L) v[r] = x1[base + j] + (p.has_x2 != 0 ? x2[base + j] : 0.0);
        sum += v[r];
    }
    float mean = group_sum(sum) / float(p.L);
    float q = 0.0;
    [[unroll]] for (uint r = 0; r < PER; ++r) {
        float d = lid + r * NT < p.L ? v[r] - mean : 0.0;
        q += d * d;
    }
    float rstd = 1.0 / sqrt(group_sum(q) / float(p.L) + p.eps);
    [[unroll]] for (uint r = 0; r < PER; ++r) {
        uint j = lid + r * NT;
        if (j >= p.L) break;
        if (p.store_sum != 0) s[base + j] = v[r];
        float o = (v[r] - mean) * rstd;
        if (p.has_scale != 0) o *= scale[j];
        y[base + j] = p.has_bias != 0 ? o + bias[j] : o;
    }
}
