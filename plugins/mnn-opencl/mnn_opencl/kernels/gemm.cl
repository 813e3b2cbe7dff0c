/* Register-tiled matrix products through local memory (mnn-vulkan's gemm.comp, in OpenCL C):
 * y[b] = act(alpha * A[b] @ B[b] + beta * C), with matmul's arguments (matmul.cl: any strides, a
 * table of per-batch offsets of A, B and Y).
 *
 * A work-group of TX x TY work-items computes a BM x BN block (BM = TY*TM, BN = TX*TN): per step
 * it stages a BK-deep slice of A and B in local memory, then each work-item accumulates TM x TN
 * outputs at rows ty + i*TY and columns tx + j*TX (strided, so neighbouring work-items read
 * neighbouring words and store neighbouring columns). Each tiling is its own kernel (GEMM_TILED
 * below, gemm_<name>), its sizes constants, so the loops unroll and acc[] stays in registers (the
 * stores' loops carry an unroll hint: left rolled, their indexing put acc[] in memory, per clang's
 * NVPTX output).
 * Launched with exactly the blocks' work-groups: no work-item returns ahead of a barrier.
 */

/* stage A's BM x BK slice at (m0, k0) into As[k * (BM + 1) + m] (zeros past the edges), walking
 * whichever of m or k is contiguous in memory so the loads coalesce; B's BK x BN likewise */
inline void gemm_stage(__local float *As, __local float *Bs, __global const float *pa, __global const float *pb,
                       int tid, const int NT, const int BM, const int BN, const int BK, int m0, int n0, int k0,
                       int M, int N, int K, int a_sm, int a_sk, int b_sk, int b_sn) {
    for (int e = tid; e < BK * BM; e += NT) {
        int kk = a_sk == 1 ? e % BK : e / BM;
        int mm = a_sk == 1 ? e / BK : e % BM;
        int gm = m0 + mm, gk = k0 + kk;
        As[kk * (BM + 1) + mm] = (gm < M && gk < K) ? pa[gm * a_sm + gk * a_sk] : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += NT) {
        int nn = b_sn == 1 ? e % BN : e / BK;
        int kk = b_sn == 1 ? e / BN : e % BK;
        int gn = n0 + nn, gk = k0 + kk;
        Bs[kk * (BN + 1) + nn] = (gn < N && gk < K) ? pb[gk * b_sk + gn * b_sn] : 0.0f;
    }
}

#define GEMM_TILED(NAME, TX, TY, TM, TN, BK)                                                                         \
    __kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void gemm_##NAME(                                      \
        __global const float *a, int ao, __global const float *b, int bo, __global float *y, int yo,                 \
        __global const int *boffs, int bto, int B, int M, int N, int K, int y_sm, int a_sm, int a_sk, int b_sk,       \
        int b_sn,                                                                                                    \
        __global const float *c, int co, int has_c, int c_sm, int c_sn, float alpha, float beta, int act, float aa,  \
        float ab) {                                                                                                  \
        __local float As[BK * (TY * TM + 1)];                                                                        \
        __local float Bs[BK * (TX * TN + 1)];                                                                        \
        const int tx = get_local_id(0), ty = get_local_id(1), bi = get_group_id(2);                                  \
        const int m0 = get_group_id(1) * (TY * TM), n0 = get_group_id(0) * (TX * TN);                                \
        __global const float *pa = a + ao + boffs[bto + 3 * bi];                                                     \
        __global const float *pb = b + bo + boffs[bto + 3 * bi + 1];                                                 \
        float acc[TM * TN];                                                                                          \
        for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0f;                                                             \
        for (int k0 = 0; k0 < K; k0 += BK) {                                                                         \
            gemm_stage(As, Bs, pa, pb, ty * TX + tx, TX * TY, TY * TM, TX * TN, BK, m0, n0, k0, M, N, K, a_sm,       \
                       a_sk, b_sk, b_sn);                                                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                            \
            for (int kk = 0; kk < BK; ++kk) {                                                                        \
                float av[TM], bv[TN];                                                                                \
                for (int i = 0; i < TM; ++i) av[i] = As[kk * (TY * TM + 1) + ty + i * TY];                           \
                for (int j = 0; j < TN; ++j) bv[j] = Bs[kk * (TX * TN + 1) + tx + j * TX];                           \
                for (int i = 0; i < TM; ++i)                                                                         \
                    for (int j = 0; j < TN; ++j) acc[i * TN + j] = mad(av[i], bv[j], acc[i * TN + j]);               \
            }                                                                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                            \
        }                                                                                                            \
        __global float *yb = y + yo + boffs[bto + 3 * bi + 2];                                                       \
        _Pragma("unroll") for (int i = 0; i < TM; ++i) {                                                             \
            int gm = m0 + ty + i * TY;                                                                               \
            _Pragma("unroll") for (int j = 0; j < TN; ++j) {                                                         \
                int gn = n0 + tx + j * TX;                                                                           \
                if (gm < M && gn < N) {                                                                              \
                    float t = alpha * acc[i * TN + j];                                                               \
                    if (has_c) t += beta * c[co + gm * c_sm + gn * c_sn];                                            \
                    yb[gm * y_sm + gn] = activate(t, act, aa, ab);                                                   \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
    }

/* the tilings of ops_matmul.GEMM_TILINGS: NAME, TX, TY, TM, TN, BK */
GEMM_TILED(big, 16, 16, 4, 4, 16)
GEMM_TILED(wide, 16, 16, 2, 4, 16)
GEMM_TILED(mid, 16, 16, 2, 2, 16)
GEMM_TILED(one, 16, 16, 1, 1, 16)
