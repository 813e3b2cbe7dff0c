// The body of reduce.comp and reduce_h.comp (included by both).
// Reductions: one work group per output element. The host splits the input's
// dims into kept ones (up to 4, giving the output index) and reduced ones (up
// to 4), each with element strides, so any set of axes reduces in one pass:
// ReduceSum/Mean/Max/Min/Prod/L2, GlobalAveragePool, GlobalMaxPool.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
layout(std430, binding = 1) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint outputs, R, mode, nk;  // mode 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 L2
    uint nr, u0, u1, u2;
    uint kshape[4];
    uint kstride[4];
    uint rshape[4];
    uint rstride[4];
} p;

shared float part[gl_WorkGroupSize.x];

float identity() {
    return p.mode == 2 ? -1.0 / 0.0 : (p.mode == 3 ? 1.0 / 0.0 : (p.mode == 4 ? 1.0 : 0.0));
}

float combine(float a, float b) {
    switch (p.mode) {
    case 2: return max(a, b);
    case 3: return min(a, b);
    case 4: return a * b;
    default: return a + b;
    }
}

void main() {
    uint out_i = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    float acc = identity();
    if (out_i < p.outputs) {
        uint base = 0, rem = out_i;
        for (int d = int(p.nk) - 1; d >= 0; --d) {
            base += (rem % p.kshape[d]) * p.kstride[d];
            rem /= p.kshape[d];
        }
        for (uint j = lid; j < p.R; j += gl_WorkGroupSize.x) {
            uint off = base;
            rem = j;
            for (int d = int(p.nr) - 1; d >= 0; --d) {
                off += (rem % p.rshape[d]) * p.rstride[d];
                rem /= p.rshape[d];
            }
            float v = float(x[off]);
            acc = combine(acc, p.mode == 5 ? v * v : v);
        }
    }
    part[lid] = acc;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] = combine(part[lid], part[lid + s]);
        barrier();
    }
    if (lid == 0 && out_i < p.outputs) {
        float r = part[0];
        y[out_i] = DATA_T(p.mode == 1 ? r / float(p.R) : (p.mode == 5 ? sqrt(r) : r));
    }
}
