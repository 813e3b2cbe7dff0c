// Batched matrix product with broadcast batch dims (up to 4), Gemm's
// transposes (as strides), alpha, beta * C (broadcast by strides) and a fused
// activation. One invocation per output element, K in its loop; with SPLIT_K,
// one work group per output, its LOCAL_X invocations striding over K, then a
// tree in shared memory (llvmpipe ends an invocation's loops after 65535 passes).
// P: total, M, N, K, nb, bshape[4], sa[4], sb[4], a_off, b_off, sam, sak, sbk, sbn,
//    c_off (-1: none), scm, scn, alpha, beta, y_off, act, act_alpha, act_beta
#include "act.glsl"

#ifdef SPLIT_K
shared float part[LOCAL_X];
#endif

void main() {
#ifdef SPLIT_K
    int i = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    int lid = int(gl_LocalInvocationID.x);
#else
    int i = flat_index();
    int lid = 0;
#endif
    if (i >= pi(0)) return;  // a SPLIT_K group returns together
    int M = pi(1), N = pi(2), K = pi(3);
    int n = i % N;
    int t = i / N;
    int m = t % M;
    int b = t / M;
    int ai = pi(17), bi = pi(18), rem = b;
    for (int d = pi(4) - 1; d >= 0; --d) {
        int s = pi(5 + d);
        int k = rem % s;
        rem /= s;
        ai += k * pi(9 + d);
        bi += k * pi(13 + d);
    }
    int sam = pi(19), sak = pi(20), sbk = pi(21), sbn = pi(22);
    ai += m * sam;
    bi += n * sbn;
    float acc = 0.0;
#ifdef SPLIT_K
    for (int k = lid; k < K; k += LOCAL_X) acc += A[ai + k * sak] * A[bi + k * sbk];
    part[lid] = acc;
    barrier();
    for (int s = LOCAL_X / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] += part[lid + s];
        barrier();
    }
    if (lid != 0) return;
    acc = part[0];
#else
    for (int k = 0; k < K; ++k) acc += A[ai + k * sak] * A[bi + k * sbk];
#endif
    float v = pf(26) * acc;
    int c_off = pi(23);
    if (c_off >= 0) v += pf(27) * A[c_off + m * pi(24) + n * pi(25)];
    A[pi(28) + i] = apply_act(v, pi(29), pf(30), pf(31));
}
