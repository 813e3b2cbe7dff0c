// The body of gemv.comp and gemv_h.comp (included by both).
// gemm.comp's product for at most 8 rows of A with B's k contiguous (b_sk == 1):
// a classifier's Gemm at a small batch. One work group per output column n and
// batch z: its invocations stride over K (each reads consecutive weights, so a
// group's loads coalesce), then a shared-memory tree adds their partial sums.
// A register tile would give such an output only N / 16 work groups, each
// walking all of K alone (54 us for MobileNetV2's 1280x1000 classifier on the
// H200, ~1% of the time the weights take to stream at its bandwidth).
// Same push constants as gemm.comp.
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 0) readonly buffer A { DATA_T a[]; };
layout(std430, binding = 1) readonly buffer B { DATA_T b[]; };
layout(std430, binding = 2) readonly buffer Bias { DATA_T bias[]; };
layout(std430, binding = 3) writeonly buffer C { DATA_T c[]; };

layout(push_constant) uniform Params {
    uint M, N, K, nb2;
    uint a_sm, a_sk, a_s1, a_s2;
    uint b_sk, b_sn, b_s1, b_s2;
    uint c_s1, c_s2, has_bias;
    int act;
    uint bias_sm, bias_sn, bias_s1, bias_s2;
    float alpha, beta, act_a, act_b;
} p;

const uint NT = gl_WorkGroupSize.x;  // a power of two
const uint MAX_ROWS = 8;
shared float part[MAX_ROWS * NT];

void main() {
    uint t = gl_LocalInvocationID.x;
    uint n = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;  // uniform in the group
    uint z1 = gl_WorkGroupID.z / p.nb2, z2 = gl_WorkGroupID.z % p.nb2;
    uint a0 = z1 * p.a_s1 + z2 * p.a_s2;
    uint b0 = z1 * p.b_s1 + z2 * p.b_s2 + min(n, p.N - 1) * p.b_sn;
    float acc[MAX_ROWS];
    for (uint m = 0; m < MAX_ROWS; ++m) acc[m] = 0.0;
    if (n < p.N) {
        for (uint k = t; k < p.K; k += NT) {
            float bv = float(b[b0 + k * p.b_sk]);
            for (uint m = 0; m < MAX_ROWS; ++m)
                if (m < p.M) acc[m] = fma(float(a[a0 + m * p.a_sm + k * p.a_sk]), bv, acc[m]);
        }
    }
    for (uint m = 0; m < MAX_ROWS; ++m) part[m * NT + t] = acc[m];
    barrier();
    for (uint s = NT / 2; s > 0; s >>= 1) {
        if (t < s)
            for (uint m = 0; m < MAX_ROWS; ++m) part[m * NT + t] += part[m * NT + t + s];
        barrier();
    }
    if (t < p.M && n < p.N) {
        uint c0 = z1 * p.c_s1 + z2 * p.c_s2;
        uint bias0 = z1 * p.bias_s1 + z2 * p.bias_s2;
        float v = p.alpha * part[t * NT];
        if (p.has_bias != 0) v += p.beta * float(bias[bias0 + t * p.bias_sm + n * p.bias_sn]);
        c[c0 + t * p.N + n] = DATA_T(apply_act(v, p.act, p.act_a, p.act_b));
    }
}
