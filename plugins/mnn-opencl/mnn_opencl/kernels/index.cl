/* Indexing and logic on any element width (bit copies through unsigned integers of that width, as
 * layout.cl's WIDTH_KERNELS): Gather along an axis, GatherND, OneHot; And/Or/Xor/Not on bools
 * (uchar); IsNaN/IsInf. Negative indices count from the end; out-of-range ones are clamped
 * (a launch cannot raise), except OneHot's, which match no cell (ONNX). */

#define INDEX_KERNELS(T, W)                                                                                   \
    __kernel void gather_any_##W(__global const T *x, int xo, __global const int *idx, int io, int idx64,   \
                                 __global T *y, int yo, int n, int P, int inner, int dim) {                  \
        int i = get_global_id(0);                                                                             \
        if (i >= n) return;                                                                                   \
        int q = i % inner, t = i / inner;                                                                     \
        int p = t % P, o = t / P;                                                                             \
        int k = idx64 ? idx[io + 2 * p] : idx[io + p];                                                        \
        k = clamp(k < 0 ? k + dim : k, 0, dim - 1);                                                           \
        y[yo + i] = x[xo + (o * dim + k) * inner + q];                                                        \
    }                                                                                                         \
    __kernel void gather_nd_##W(__global const T *x, int xo, __global const int *idx, int io, int idx64,     \
                                __global T *y, int yo, int n, int S, int m, int per_batch, int batch_stride,  \
                                int8 dims, int8 strides) {                                                    \
        int i = get_global_id(0);                                                                             \
        if (i >= n) return;                                                                                   \
        int d[8], st[8];                                                                                      \
        vstore8(dims, 0, d);                                                                                  \
        vstore8(strides, 0, st);                                                                              \
        int s = i % S, j = i / S;                                                                             \
        int at = (j / per_batch) * batch_stride;                                                              \
        for (int k = 0; k < m; ++k) {                                                                         \
            int v = idx64 ? idx[io + 2 * (j * m + k)] : idx[io + j * m + k];                                  \
            at += clamp(v < 0 ? v + d[k] : v, 0, d[k] - 1) * st[k];                                           \
        }                                                                                                     \
        y[yo + i] = x[xo + at + s];                                                                           \
    }                                                                                                         \
    __kernel void onehot_##W(__global const int *idx, int io, int kind, __global const T *values, int vo,    \
                             __global T *y, int yo, int n, int inner, int depth) {                            \
        int i = get_global_id(0);                                                                             \
        if (i >= n) return;                                                                                   \
        int q = i % inner, t = i / inner;                                                                     \
        int k = t % depth, o = t / depth, at = o * inner + q;                                                 \
        int v = kind == 1 ? idx[io + 2 * at] : kind == 2 ? (int)as_float(idx[io + at]) : idx[io + at];     \
        v = v < 0 ? v + depth : v;                                                                            \
        y[yo + i] = values[vo + (v == k ? 1 : 0)];                                                            \
    }
INDEX_KERNELS(uchar, 1)
INDEX_KERNELS(uint, 4)
INDEX_KERNELS(ulong, 8)

/* op: 0 And, 1 Or, 2 Xor (broadcast), 3 Not (b unused) */
__kernel void logic_bcast(__global const uchar *a, int ao, __global const uchar *b, int bo, __global uchar *y, int yo,
                          int n, int op, int ndim, int8 shape, int8 as, int8 bs) {
    int i = get_global_id(0);
    if (i >= n) return;
    int ai, bi;
    strided_offsets2(i, ndim, shape, as, bs, &ai, &bi);
    int x = a[ao + ai] != 0, z = op == 3 ? 0 : b[bo + bi] != 0;
    y[yo + i] = op == 0 ? (x && z) : op == 1 ? (x || z) : op == 2 ? (x != z) : !x;
}

/* op: 0 IsNaN, 1 IsInf (detect_negative, detect_positive) */
__kernel void float_class(__global const float *x, int xo, __global uchar *y, int yo, int n, int op, int neg,
                          int pos) {
    int i = get_global_id(0);
    if (i >= n) return;
    float v = x[xo + i];
    y[yo + i] = op == 0 ? isnan(v) : (isinf(v) && ((v < 0.0f && neg) || (v > 0.0f && pos)));
}
