// The body of softmax.comp and softmax_h.comp (included by both).
// Softmax / LogSoftmax along one axis: the tensor is (outer, L, inner) and one
// work group handles one (outer, inner) row of L elements, `inner` apart.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
layout(std430, binding = 1) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint rows, L, inner, log_out;
} p;

shared float part[gl_WorkGroupSize.x];

float reduce(float v, bool is_max) {
    uint lid = gl_LocalInvocationID.x;
    barrier();  // earlier readers of part[] are done
    part[lid] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] = is_max ? max(part[lid], part[lid + s]) : part[lid] + part[lid + s];
        barrier();
    }
    return part[0];
}

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    bool live = row < p.rows;
    uint base = live ? (row / p.inner) * p.L * p.inner + row % p.inner : 0;
    float m = -1.0 / 0.0;
    if (live)
        for (uint j = lid; j < p.L; j += gl_WorkGroupSize.x) m = max(m, float(x[base + j * p.inner]));
    m = reduce(m, true);
    float s = 0.0;
    if (live)
        for (uint j = lid; j < p.L; j += gl_WorkGroupSize.x) s += exp(float(x[base + j * p.inner]) - m);
    s = reduce(s, false);
    if (!live) return;
    float ls = log(s);
    for (uint j = lid; j < p.L; j += gl_WorkGroupSize.x) {
        float v = float(x[base + j * p.inner]) - m;
        y[base + j * p.inner] = DATA_T(p.log_out != 0 ? v - ls : exp(v) / s);
    }
}
