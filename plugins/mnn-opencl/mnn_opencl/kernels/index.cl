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

/* ScatterElements after y holds a copy of the data (kit.gather.scatter_elements_fields): one
 * work-item walks one line of indices along the axis in order, so duplicates (which only one line
 * can hold) reduce in index order, or the last one wins a plain write. Values are 32-bit words
 * (`words` a value for a plain write); reductions (1 add, 2 mul, 3 max, 4 min) on float or, with
 * int_data, int32 values. Negative indices count from the end, out-of-range ones are clamped. */
__kernel void scatter_elements(__global const int *idx, int io, int idx64, __global const uint *upd, int uo,
                               __global uint *y, int yo, int lines, int ndim, int axis, int words, int dim,
                               int count, int reduction, int int_data, int8 shape, int8 dstride, int8 istride) {
    int line = get_global_id(0);
    if (line >= lines) return;
    int dst, src;
    strided_offsets2(line, ndim, shape, dstride, istride, &dst, &src);
    int ds[8], is[8];
    vstore8(dstride, 0, ds);
    vstore8(istride, 0, is);
    for (int j = 0; j < count; ++j, src += is[axis]) {
        int k = idx64 ? idx[io + 2 * src] : idx[io + src];
        k = clamp(k < 0 ? k + dim : k, 0, dim - 1);
        int at = dst + k * ds[axis];
        if (reduction == 0) {
            for (int w = 0; w < words; ++w) y[yo + at * words + w] = upd[uo + src * words + w];
        } else if (int_data) {
            int a = as_int(y[yo + at]), b = as_int(upd[uo + src]);
            int r = reduction == 1 ? a + b : reduction == 2 ? a * b : reduction == 3 ? max(a, b) : min(a, b);
            y[yo + at] = as_uint(r);
        } else {
            float a = as_float(y[yo + at]), b = as_float(upd[uo + src]);
            float r = reduction == 1 ? a + b : reduction == 2 ? a * b : reduction == 3 ? fmax(a, b) : fmin(a, b);
            y[yo + at] = as_uint(r);
        }
    }
}
