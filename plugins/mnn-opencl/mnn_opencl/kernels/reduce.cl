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
