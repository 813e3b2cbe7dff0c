/* Data movement. copy_strided walks `shape` and copies src[so + sum c_d*ss_d] to
 * dst[do + sum c_d*ds_d]: a transpose, slice, broadcast (stride 0) or concat
 * slab is one launch. gather_table copies through a table of arena offsets
 * (any other data movement). resize2d: separable nearest/linear over H and W. */

__kernel void copy_strided(__global const float *src, int so, __global float *dst, int dof, int n, int ndim,
                           int8 shape, int8 ss, int8 ds) {
    int i = get_global_id(0);
    if (i >= n) return;
    int si, di;
    strided_offsets2(i, ndim, shape, ss, ds, &si, &di);
    dst[dof + di] = src[so + si];
}

/* a negative table entry writes `fill` (constant padding) */
__kernel void gather_table(__global const float *arena, __global const int *table, int to, __global float *dst,
                           int dof, int n, float fill) {
    int i = get_global_id(0);
    if (i >= n) return;
    int t = table[to + i];
    dst[dof + i] = t >= 0 ? arena[t] : fill;
}

/* Gather along an axis: out[o][p][q] = x[o][idx[p]][q], negative indices from the end */
__kernel void gather_axis_i64(__global const float *x, int xo, __global const long *idx, int io, __global float *y,
                              int yo, int n, int P, int inner, int dim) {
    int i = get_global_id(0);
    if (i >= n) return;
    int q = i % inner, t = i / inner;
    int p = t % P, o = t / P;
    long k = idx[io + p];
    k = k < 0 ? k + dim : k;
    k = clamp(k, (long)0, (long)(dim - 1));
    y[yo + i] = x[xo + (o * dim + (int)k) * inner + q];
}

__kernel void gather_axis_i32(__global const float *x, int xo, __global const int *idx, int io, __global float *y,
                              int yo, int n, int P, int inner, int dim) {
    int i = get_global_id(0);
    if (i >= n) return;
    int q = i % inner, t = i / inner;
    int p = t % P, o = t / P;
    int k = idx[io + p];
    k = k < 0 ? k + dim : k;
    k = clamp(k, 0, dim - 1);
    y[yo + i] = x[xo + (o * dim + k) * inner + q];
}

/* tables: for each output row h: (h0, h1) and weights (wh0, wh1); likewise per column */
__kernel void resize2d(__global const float *x, int xo, __global float *y, int yo, int total, int H, int W,
                       int OH, int OW, __global const int *idx, int io, __global const float *wt, int wto) {
    int i = get_global_id(0);
    if (i >= total) return;
    int ow = i % OW, t = i / OW;
    int oh = t % OH, nc = t / OH;
    __global const float *xb = x + xo + nc * H * W;
    int h0 = idx[io + 2 * oh], h1 = idx[io + 2 * oh + 1];
    int w0 = idx[io + 2 * OH + 2 * ow], w1 = idx[io + 2 * OH + 2 * ow + 1];
    float a0 = wt[wto + 2 * oh], a1 = wt[wto + 2 * oh + 1];
    float b0 = wt[wto + 2 * OH + 2 * ow], b1 = wt[wto + 2 * OH + 2 * ow + 1];
    float top = b0 * xb[h0 * W + w0] + b1 * xb[h0 * W + w1];
    float bot = b0 * xb[h1 * W + w0] + b1 * xb[h1 * W + w1];
    y[yo + i] = a0 * top + a1 * bot;
}

/* The same moves for elements of other widths (int64, int32, float16, int8, bool, ...),
 * as bit copies through unsigned integers of that width. */
#define WIDTH_KERNELS(T, W)                                                                                  \
    __kernel void copy_strided_##W(__global const T *src, int so, __global T *dst, int dof, int n, int ndim, \
                                   int8 shape, int8 ss, int8 ds) {                                           \
        int i = get_global_id(0);                                                                            \
        if (i >= n) return;                                                                                  \
        int si, di;                                                                                          \
        strided_offsets2(i, ndim, shape, ss, ds, &si, &di);                                                  \
        dst[dof + di] = src[so + si];                                                                        \
    }                                                                                                        \
    __kernel void gather_table_##W(__global const T *arena, __global const int *table, int to,              \
                                   __global T *dst, int dof, int n) {                                        \
        int i = get_global_id(0);                                                                            \
        if (i >= n) return;                                                                                  \
        dst[dof + i] = arena[table[to + i]];                                                                 \
    }
WIDTH_KERNELS(uchar, 1)
WIDTH_KERNELS(ushort, 2)
WIDTH_KERNELS(uint, 4)
WIDTH_KERNELS(ulong, 8)

/* Cast between float32, int32, int64 and bool (uchar); floats to ints truncate toward zero. */
#define CAST_KERNEL(NAME, S, D, EXPR)                                                                        \
    __kernel void cast_##NAME(__global const S *x, int xo, __global D *y, int yo, int n) {                  \
        int i = get_global_id(0);                                                                            \
        if (i >= n) return;                                                                                  \
        S v = x[xo + i];                                                                                     \
        y[yo + i] = (EXPR);                                                                                  \
    }
CAST_KERNEL(f32_i32, float, int, (int)v)
CAST_KERNEL(f32_i64, float, long, (long)v)
CAST_KERNEL(f32_bool, float, uchar, v != 0.0f)
CAST_KERNEL(i32_f32, int, float, (float)v)
CAST_KERNEL(i64_f32, long, float, (float)v)
CAST_KERNEL(bool_f32, uchar, float, v ? 1.0f : 0.0f)
CAST_KERNEL(i64_i32, long, int, (int)v)
CAST_KERNEL(i32_i64, int, long, (long)v)
CAST_KERNEL(i64_bool, long, uchar, v != 0)
CAST_KERNEL(i32_bool, int, uchar, v != 0)
CAST_KERNEL(bool_i64, uchar, long, v ? 1 : 0)
CAST_KERNEL(bool_i32, uchar, int, v ? 1 : 0)

/* A transpose through local memory. Dim P is contiguous in src, dim Q in dst: each 32x32 tile is read along P
 * and written along Q, so both sides touch consecutive addresses. The other dims (nd of them, in shape/ss/ds)
 * pick the tile's slab. Work-groups of 256 in one dim (tiles along P, then Q, then the slab): a GPU's grid limits
 * its second and third dims. has_r: adds r, laid out as dst (a residual after a Transpose). */
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void copy_tile_t(
    __global const float *src, int so, __global float *dst, int dof, __global const float *r, int ro, int has_r,
    int P, int Q, int sq, int dp, int nd, int8 shape, int8 ss, int8 ds) {
    __local float tile[32][33]; /* 33: the column reads fall on different banks */
    int lx = get_local_id(0) & 31, ly = get_local_id(0) >> 5;
    int g = get_group_id(0), tp = (P + 31) / 32, tq = (Q + 31) / 32;
    int p0 = (g % tp) * 32, q0 = (g / tp % tq) * 32;
    int sb, db;
    strided_offsets2(g / tp / tq, nd, shape, ss, ds, &sb, &db);
    src += so + sb;
    dst += dof + db;
    r += ro + db;
    int p = p0 + lx;
    for (int k = ly; k < 32; k += 8)
        if (p < P && q0 + k < Q) tile[k][lx] = src[p + (q0 + k) * sq];
    barrier(CLK_LOCAL_MEM_FENCE);
    int q = q0 + lx;
    for (int k = ly; k < 32; k += 8)
        if (q < Q && p0 + k < P) {
            int at = q + (p0 + k) * dp;
            dst[at] = has_r ? tile[lx][k] + r[at] : tile[lx][k];
        }
}

/* Rows of 4-float groups contiguous on both sides (a transpose of whole rows, a slice): the row's offsets are
 * worked out once per 4 elements rather than per element. */
__kernel void copy_rows4(__global const float *src, int so, __global float *dst, int dof, int W4, int n4,
                         int nd, int8 shape, int8 ss, int8 ds) {
    int i = get_global_id(0);
    if (i >= n4) return;
    int j = i % W4, sb, db;
    strided_offsets2(i / W4, nd, shape, ss, ds, &sb, &db);
    vstore4(vload4(j, src + so + sb), j, dst + dof + db);
}
