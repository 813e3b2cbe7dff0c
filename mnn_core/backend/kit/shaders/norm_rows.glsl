// The body of norm_rows.comp and norm_rows_h.comp (included by both).
// Normalize contiguous rows of L elements: y = (x - mean) / sqrt(var + eps)
// * scale + bias, mean and (biased) variance per row, two passes.
// mode 0 (LayerNormalization): scale/bias index = j % S (S: their size, a suffix of the normalized shape)
// mode 1 (InstanceNormalization): scale/bias index = row % S (the channel)
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
layout(std430, binding = 1) readonly buffer Scale { DATA_T scale[]; };
layout(std430, binding = 2) readonly buffer Bias { DATA_T bias[]; };
layout(std430, binding = 3) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint rows, L, mode, S;
    float eps;
    uint has_scale, has_bias;
} p;

shared float part[gl_WorkGroupSize.x];

float row_sum(float v) {
    uint lid = gl_LocalInvocationID.x;
    barrier();
    part[lid] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] += part[lid + s];
        barrier();
    }
    return part[0];
}

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    bool live = row < p.rows;
    uint base = live ? row * p.L : 0;
    float s = 0.0;
    if (live)
        for (uint j = lid; j < p.L; j += gl_WorkGroupSize.x) s += float(x[base + j]);
    float mean = row_sum(s) / float(p.L);
    float q = 0.0;
    if (live)
        for (uint j = lid; j < p.L; j += gl_WorkGroupSize.x) {
            float d = float(x[base + j]) - mean;
            q += d * d;
        }
    float rstd = 1.0 / sqrt(row_sum(q) / float(p.L) + p.eps);
    if (!live) return;
    for (uint j = lid; j < p.L; j += gl_WorkGroupSize.x) {
        uint k = p.mode == 0 ? j % p.S : row % p.S;
        float v = (float(x[base + j]) - mean) * rstd;
        if (p.has_scale != 0) v *= float(scale[k]);
        y[base + j] = DATA_T(p.has_bias != 0 ? v + float(bias[k]) : v);
    }
}
