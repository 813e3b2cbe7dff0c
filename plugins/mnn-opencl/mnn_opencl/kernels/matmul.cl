/* Matrix products: y[b] = act(alpha * A[b] @ B[b] + beta * C), any strides.
 *
 * A (M x K) is read at a[m * a_sm + k * a_sk], B (K x N) at b[k * b_sk + n * b_sn], Y written
 * at y[m * y_sm + n], so transposes and 1-D operands are strides; the per-batch offsets of A, B
 * and Y (numpy batch broadcasting, a transposed output) come from a table of three columns.
 * Each work-item computes a 4x4 tile;
 * indices past the edge are clamped (valid loads) and their results not stored.
 */
__kernel void matmul(__global const float *a, int ao, __global const float *b, int bo, __global float *y, int yo,
                     __global const int *boffs, int bto, int B, int M, int N, int K, int y_sm,
                     int a_sm, int a_sk, int b_sk, int b_sn,
                     __global const float *c, int co, int has_c, int c_sm, int c_sn,
                     float alpha, float beta, int act, float aa, float ab) {
    int n0 = get_global_id(0) * 4, m0 = get_global_id(1) * 4, bi = get_global_id(2);
    if (n0 >= N || m0 >= M || bi >= B) return;
    __global const float *pa = a + ao + boffs[bto + 3 * bi];
    __global const float *pb = b + bo + boffs[bto + 3 * bi + 1];
    int m1 = min(m0 + 1, M - 1), m2 = min(m0 + 2, M - 1), m3 = min(m0 + 3, M - 1);
    int n1 = min(n0 + 1, N - 1), n2 = min(n0 + 2, N - 1), n3 = min(n0 + 3, N - 1);
    __global const float *r0 = pa + m0 * a_sm, *r1 = pa + m1 * a_sm, *r2 = pa + m2 * a_sm, *r3 = pa + m3 * a_sm;
    int c0 = n0 * b_sn, c1 = n1 * b_sn, c2 = n2 * b_sn, c3 = n3 * b_sn;
    float4 acc0 = (float4)(0.0f), acc1 = (float4)(0.0f), acc2 = (float4)(0.0f), acc3 = (float4)(0.0f);
    for (int k = 0; k < K; ++k) {
        __global const float *bk = pb + k * b_sk;
        float4 bv = (float4)(bk[c0], bk[c1], bk[c2], bk[c3]);
        int ka = k * a_sk;
        acc0 = mad((float4)(r0[ka]), bv, acc0);
        acc1 = mad((float4)(r1[ka]), bv, acc1);
        acc2 = mad((float4)(r2[ka]), bv, acc2);
        acc3 = mad((float4)(r3[ka]), bv, acc3);
    }
    float4 rows[4] = {acc0, acc1, acc2, acc3};
    __global float *yb = y + yo + boffs[bto + 3 * bi + 2];
    for (int i = 0; i < 4 && m0 + i < M; ++i) {
        float v[4];
        vstore4(rows[i] * alpha, 0, v);
        for (int j = 0; j < 4 && n0 + j < N; ++j) {
            float t = v[j];
            if (has_c) t += beta * c[co + (m0 + i) * c_sm + (n0 + j) * c_sn];
            yb[(m0 + i) * y_sm + n0 + j] = activate(t, act, aa, ab);
        }
    }
}

/* Few rows (M <= 4) times a B stored N x K (each output column one contiguous row
 * of B, e.g. a Gemm with transB): one work-group per output column n, its lanes
 * striding over K (coalesced), then a reduction in local memory. */
__kernel void matvec_nk(__global const float *a, int ao, int a_sm, __global const float *bt, int bto,
                        __global float *y, int yo, int M, int N, int K,
                        __global const float *c, int co, int has_c, int c_sm, int c_sn,
                        float alpha, float beta, int act, float aa, float ab, __local float *s) {
    int n = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    __global const float *brow = bt + bto + n * K;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = lid; k < K; k += lsz) {
        float bv = brow[k];
        for (int m = 0; m < M; ++m) acc[m] = mad(a[ao + m * a_sm + k], bv, acc[m]);
    }
    for (int m = 0; m < M; ++m) {
        barrier(CLK_LOCAL_MEM_FENCE);
        s[lid] = acc[m];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int w = lsz / 2; w > 0; w >>= 1) {
            if (lid < w) s[lid] += s[lid + w];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) {
            float t = alpha * s[0];
            if (has_c) t += beta * c[co + m * c_sm + n * c_sn];
            y[yo + m * N + n] = activate(t, act, aa, ab);
        }
    }
}
