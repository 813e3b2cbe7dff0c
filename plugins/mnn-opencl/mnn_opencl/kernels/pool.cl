/* Pooling over NCHW. pool2d: one work-item per output element; positions in
 * the padding never win a max and count for an average only with
 * count_include_pad; positions past the padding (ceil_mode) never count.
 * global_pool: one work-group per (n, c), reduced in local memory. */

__kernel void pool2d(__global const float *x, int xo, __global float *y, int yo, int total,
                     int H, int W, int OH, int OW, int KH, int KW, int SH, int SW,
                     int PT, int PL, int PB, int PR, int DH, int DW, int is_avg, int count_pad) {
    int i = get_global_id(0);
    if (i >= total) return;
    int ow = i % OW, t = i / OW;
    int oh = t % OH, nc = t / OH;
    __global const float *xb = x + xo + nc * H * W;
    int hs = oh * SH - PT, ws = ow * SW - PL;
    float acc = is_avg ? 0.0f : -INFINITY;
    int inside = 0, ch = 0, cw = 0;
    for (int kh = 0; kh < KH; ++kh) {
        int ih = hs + kh * DH;
        if (ih >= -PT && ih < H + PB) ch++;
        if (ih < 0 || ih >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
            int iw = ws + kw * DW;
            if (iw < 0 || iw >= W) continue;
            float v = xb[ih * W + iw];
            acc = is_avg ? acc + v : fmax(acc, v);
            inside++;
        }
    }
    if (is_avg) {
        for (int kw = 0; kw < KW; ++kw) {
            int iw = ws + kw * DW;
            if (iw >= -PL && iw < W + PR) cw++;
        }
        acc = acc / (float)(count_pad ? ch * cw : inside);
    }
    y[yo + i] = acc;
}

__kernel void global_pool(__global const float *x, int xo, __global float *y, int yo, int NC, int HW, int is_avg,
                          __local float *scratch) {
    int g = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    __global const float *xb = x + xo + g * HW;
    float acc = is_avg ? 0.0f : -INFINITY;
    for (int p = lid; p < HW; p += lsz) acc = is_avg ? acc + xb[p] : fmax(acc, xb[p]);
    scratch[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = lsz / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] = is_avg ? scratch[lid] + scratch[lid + s] : fmax(scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) y[yo + g] = is_avg ? scratch[0] / (float)HW : scratch[0];
}
