/* Normalizations. Row kernels use one work-group per row (power-of-two size),
 * reducing in local memory; statistics are computed in float, two-pass.
 * Kernels with barriers are launched with exactly one group per row and have no
 * early return: PoCL 3.1 miscompiles a return ahead of a barrier (it runs a
 * group past the end). */

inline float wg_reduce(__local float *s, float v, int is_max) {
    int lid = get_local_id(0), lsz = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = lsz / 2; k > 0; k >>= 1) {
        if (lid < k) s[lid] = is_max ? fmax(s[lid], s[lid + k]) : s[lid] + s[lid + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return s[0];
}

/* softmax (or log-softmax) over the last axis of R rows of length L */
__kernel void softmax_rows(__global const float *x, int xo, __global float *y, int yo, int R, int L, int log_mode,
                           __local float *s) {
    int r = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    __global const float *xr = x + xo + r * L;
    __global float *yr = y + yo + r * L;
    float m = -INFINITY;
    for (int j = lid; j < L; j += lsz) m = fmax(m, xr[j]);
    m = wg_reduce(s, m, 1);
    float sum = 0.0f;
    for (int j = lid; j < L; j += lsz) sum += exp(xr[j] - m);
    sum = wg_reduce(s, sum, 0);
    if (log_mode) {
        float ls = log(sum);
        for (int j = lid; j < L; j += lsz) yr[j] = xr[j] - m - ls;
    } else {
        for (int j = lid; j < L; j += lsz) yr[j] = exp(xr[j] - m) / sum;
    }
}

/* softmax over an inner axis: one work-item per (outer, inner) position */
__kernel void softmax_strided(__global const float *x, int xo, __global float *y, int yo, int outer, int L,
                              int inner, int log_mode) {
    int i = get_global_id(0);
    if (i >= outer * inner) return;
    int o = i / inner, in = i - o * inner;
    __global const float *xr = x + xo + o * L * inner + in;
    __global float *yr = y + yo + o * L * inner + in;
    float m = -INFINITY;
    for (int j = 0; j < L; ++j) m = fmax(m, xr[j * inner]);
    float sum = 0.0f;
    for (int j = 0; j < L; ++j) sum += exp(xr[j * inner] - m);
    if (log_mode) {
        float ls = log(sum);
        for (int j = 0; j < L; ++j) yr[j * inner] = xr[j * inner] - m - ls;
    } else {
        for (int j = 0; j < L; ++j) yr[j * inner] = exp(xr[j * inner] - m) / sum;
    }
}

/* y = (x - mean) / sqrt(var + eps) * scale + bias over rows of length L; scale and bias
 * are indexed by position in the row, or (per_row > 0, instance norm) by row % per_row */
__kernel void layernorm_rows(__global const float *x, int xo, __global const float *g, int go, int has_g,
                             __global const float *b, int bo, int has_b, __global float *y, int yo, int R, int L,
                             float eps, int per_row, __local float *s) {
    int r = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    __global const float *xr = x + xo + r * L;
    __global float *yr = y + yo + r * L;
    float sum = 0.0f;
    for (int j = lid; j < L; j += lsz) sum += xr[j];
    float mean = wg_reduce(s, sum, 0) / (float)L;
    float sq = 0.0f;
    for (int j = lid; j < L; j += lsz) {
        float d = xr[j] - mean;
        sq += d * d;
    }
    float inv = 1.0f / sqrt(wg_reduce(s, sq, 0) / (float)L + eps);
    int c = per_row > 0 ? r % per_row : 0;
    for (int j = lid; j < L; j += lsz) {
        int p = per_row > 0 ? c : j;
        float v = (xr[j] - mean) * inv;
        if (has_g) v *= g[go + p];
        if (has_b) v += b[bo + p];
        yr[j] = v;
    }
}

/* layernorm_rows of x1 + x2 (a residual sum, same shapes), the sum also stored in s when has_s:
 * opencl.AddLayerNorm, one launch and one read of the sum fewer than Add then LayerNormalization */
__kernel void add_layernorm_rows(__global const float *x1, int x1o, __global const float *x2, int x2o,
                                 __global float *s_out, int so, int has_s, __global const float *g, int go,
                                 int has_g, __global const float *b, int bo, int has_b, __global float *y, int yo,
                                 int R, int L, float eps, __local float *s) {
    int r = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    __global const float *ar = x1 + x1o + r * L, *br = x2 + x2o + r * L;
    __global float *yr = y + yo + r * L;
    float sum = 0.0f;
    for (int j = lid; j < L; j += lsz) {
        float v = ar[j] + br[j];
        if (has_s) s_out[so + r * L + j] = v;
        sum += v;
    }
    float mean = wg_reduce(s, sum, 0) / (float)L;
    float sq = 0.0f;
    for (int j = lid; j < L; j += lsz) {
        float d = ar[j] + br[j] - mean;
        sq += d * d;
    }
    float inv = 1.0f / sqrt(wg_reduce(s, sq, 0) / (float)L + eps);
    for (int j = lid; j < L; j += lsz) {
        float v = (ar[j] + br[j] - mean) * inv;
        if (has_g) v *= g[go + j];
        if (has_b) v += b[bo + j];
        yr[j] = v;
    }
}

/* opencl.TransposeLayerNorm: layernorm_rows over the channels of an [N][C][P] tensor, stored [N][P][C]
 * (a Transpose moving the channels last, then the norm over them: ConvNeXt's blocks), one pass less
 * than the transpose and the norm apart. A work-group takes LNC_P positions, LNC_L work-items a position
 * summing every LNC_L-th channel: read along positions (coalesced), written along channels. */
#define LNC_P 32
#define LNC_L 8
__kernel __attribute__((reqd_work_group_size(LNC_P * LNC_L, 1, 1))) void layernorm_nchw(
    __global const float *x, int xo, __global const float *g, int go, int has_g, __global const float *b, int bo,
    int has_b, __global float *y, int yo, int C, int P, float eps) {
    __local float red[LNC_L * LNC_P];
    __local float stat[2 * LNC_P];
    const int tiles = (P + LNC_P - 1) / LNC_P, n = get_group_id(0) / tiles, p0 = (get_group_id(0) % tiles) * LNC_P;
    const int lid = get_local_id(0), p = lid % LNC_P, l = lid / LNC_P, pos = p0 + p;
    __global const float *xn = x + xo + n * C * P;
    float sum = 0.0f;
    if (pos < P)
        for (int c = l; c < C; c += LNC_L) sum += xn[c * P + pos];
    red[l * LNC_P + p] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float t = 0.0f;
        for (int i = 0; i < LNC_L; ++i) t += red[i * LNC_P + p];
        stat[p] = t / (float)C;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const float mean = stat[p];
    float sq = 0.0f;
    if (pos < P)
        for (int c = l; c < C; c += LNC_L) {
            float d = xn[c * P + pos] - mean;
            sq += d * d;
        }
    red[l * LNC_P + p] = sq;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float t = 0.0f;
        for (int i = 0; i < LNC_L; ++i) t += red[i * LNC_P + p];
        stat[LNC_P + p] = 1.0f / sqrt(t / (float)C + eps);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int wp = lid / LNC_L, wl = lid % LNC_L, wpos = p0 + wp;
    if (wpos >= P) return;
    const float wmean = stat[wp], inv = stat[LNC_P + wp];
    __global float *yr = y + yo + (n * P + wpos) * C;
    for (int c = wl; c < C; c += LNC_L) {
        float v = (xn[c * P + wpos] - wmean) * inv;
        if (has_g) v *= g[go + c];
        if (has_b) v += b[bo + c];
        yr[c] = v;
    }
}

/* inference batch norm over axis 1: per channel (x - mean) / sqrt(var + eps) * scale + bias */
__kernel void batchnorm(__global const float *x, int xo, __global const float *g, int go, __global const float *b,
                        int bo, __global const float *mean, int mo, __global const float *var, int vo,
                        __global float *y, int yo, int total, int C, int inner, float eps) {
    int i = get_global_id(0);
    if (i >= total) return;
    int c = (i / inner) % C;
    y[yo + i] = (x[xo + i] - mean[mo + c]) / sqrt(var[vo + c] + eps) * g[go + c] + b[bo + c];
}
