/* Reductions over any set of axes: one work-item per output element walks the
 * reduced positions (kept and reduced dims each as shape + input strides). */

__kernel void reduce_axes(__global const float *x, int xo, __global float *y, int yo, int n_out, int n_red,
                          int kdim, int8 kshape, int8 kstride, int rdim, int8 rshape, int8 rstride, int op) {
    int i = get_global_id(0);
    if (i >= n_out) return;
    int base, unused;
    strided_offsets2(i, kdim, kshape, kstride, kstride, &base, &unused);
    __global const float *xb = x + xo + base;
    float acc = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f;
    int single = rdim == 1;
    int rs[8];
    vstore8(rstride, 0, rs);
    for (int r = 0; r < n_red; ++r) {
        int off;
        if (single) {
            off = r * rs[0];
        } else {
            strided_offsets2(r, rdim, rshape, rstride, rstride, &off, &unused);
        }
        float v = xb[off];
        switch (op) {
        case 2: acc = fmax(acc, v); break;
        case 3: acc = fmin(acc, v); break;
        case 4: acc *= v; break;
        case 5:
        case 6: acc = mad(v, v, acc); break;
        default: acc += v;
        }
    }
    if (op == 1) acc = acc / (float)n_red;
    if (op == 5) acc = sqrt(acc);
    y[yo + i] = acc;
}

/* ArgMax / ArgMin along one axis of x seen as (outer, L, inner), x float (_f32), int32 (_i32) or int64
 * (_i64): one work-item per (outer, inner) row scans it in order; ties go to the first index, or the
 * last with select_last. int64 result. */
#define ARG_KERNEL(T, S)                                                                                    \
    __kernel void arg_reduce_##S(__global const T *x, int xo, __global long *y, int yo, int rows, int L,     \
                                 int inner, int is_min, int select_last) {                                  \
        int row = get_global_id(0);                                                                         \
        if (row >= rows) return;                                                                            \
        __global const T *xb = x + xo + (row / inner) * L * inner + row % inner;                            \
        T best = xb[0];                                                                                     \
        int at = 0;                                                                                         \
        for (int j = 1; j < L; ++j) {                                                                       \
            T v = xb[j * inner];                                                                            \
            if ((is_min ? v < best : v > best) || (select_last && v == best)) {                             \
                best = v;                                                                                   \
                at = j;                                                                                     \
            }                                                                                               \
        }                                                                                                   \
        y[yo + row] = at;                                                                                   \
    }
ARG_KERNEL(float, f32)
ARG_KERNEL(int, i32)
ARG_KERNEL(long, i64)
