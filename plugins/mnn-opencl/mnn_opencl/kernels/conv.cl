/* 2-D convolution, NCHW input, OIHW weight, optional bias, fused activation.
 *
 * conv2d_oc4   general direct convolution (strides, dilations, pads, groups whose
 *              output channels per group are a multiple of 4): each work-item
 *              computes 4 output channels x 4 output columns from weights packed
 *              as [O/4][Cg][KH][KW][4] (pack_oc4, half with -DMNN_FP16), so one vector load feeds 16 FMAs.
 * conv1x1_oc4  1x1, stride 1, no padding, one group: a GEMM over the flattened
 *              pixels, 4 output channels x 4 pixels per work-item, vector loads.
 * conv2d_c1    any grouping (depthwise, odd groups): 1 output channel x 4 columns,
 *              weights read in their OIHW layout.
 *
 * Split-K: when the output alone gives a GPU too few work-items (a 7x7x512 layer),
 * conv2d_oc4 and conv1x1_oc4 also split the input channels into S slices (in the
 * last NDRange dim); each slice writes raw partial sums to `part` ([S][N][O][OH][OW])
 * and splitk_reduce adds them up with the bias and the activation.
 */

__kernel void pack_oc4(__global const float *w, int wo, __global wtype *p, int po, int O, int CK, int total) {
    int i = get_global_id(0);
    if (i >= total) return;
    int lane = i & 3, r = i >> 2;
    int ck = r % CK, ob = r / CK;
    int o = ob * 4 + lane;
    STORE_W(o < O ? w[wo + o * CK + ck] : 0.0f, po + i, p);
}

inline float4 bias4(__global const float *bias, int bo, int has_bias, int o0, int O) {
    if (!has_bias) return (float4)(0.0f);
    return (float4)(bias[bo + o0], o0 + 1 < O ? bias[bo + o0 + 1] : 0.0f, o0 + 2 < O ? bias[bo + o0 + 2] : 0.0f,
                    o0 + 3 < O ? bias[bo + o0 + 3] : 0.0f);
}

/* store 4 channels (o0..o0+3) of one output pixel `pix` of image n */
inline void store_oc4(__global float *y, int yo, float4 v, int n, int o0, int O, int plane, int pix) {
    __global float *dst = y + yo + (n * O + o0) * plane + pix;
    dst[0] = v.s0;
    if (o0 + 1 < O) dst[plane] = v.s1;
    if (o0 + 2 < O) dst[2 * plane] = v.s2;
    if (o0 + 3 < O) dst[3 * plane] = v.s3;
}

__kernel void conv2d_oc4(__global const float *x, int xo, __global const wtype *wp, int wpo,
                         __global const float *bias, int bo, int has_bias, __global float *y, int yo,
                         int N, int C, int H, int W, int O, int OH, int OW, int Cg, int OG, int OB,
                         int KH, int KW, int SH, int SW, int PT, int PL, int DH, int DW,
                         int act, float aa, float ab, int S, __global float *part, int parto) {
    int owb = get_global_id(0), oh = get_global_id(1), nbs = get_global_id(2);
    int ow0 = owb * 4;
    int nb = nbs / S, sl = nbs - nb * S;
    int n = nb / OB, ob = nb - n * OB;
    if (ow0 >= OW || oh >= OH || n >= N) return;
    int o0 = ob * 4;
    int cin0 = (o0 / OG) * Cg;
    int cs = (Cg + S - 1) / S, c_lo = sl * cs, c_hi = min(Cg, c_lo + cs);
    __global const float *xb = x + xo + (n * C + cin0) * H * W;
    __global const wtype *wb = wp + wpo + (ob * Cg + c_lo) * KH * KW * 4;
    float4 acc0 = (float4)(0.0f), acc1 = (float4)(0.0f), acc2 = (float4)(0.0f), acc3 = (float4)(0.0f);
    int ih0 = oh * SH - PT;
    int iw0 = ow0 * SW - PL;
    for (int c = c_lo; c < c_hi; ++c) {
        for (int kh = 0; kh < KH; ++kh) {
            int ih = ih0 + kh * DH;
            if (ih < 0 || ih >= H) {
                wb += KW * 4;
                continue;
            }
            __global const float *row = xb + (c * H + ih) * W;
            for (int kw = 0; kw < KW; ++kw) {
                float4 wv = LOAD_W4(0, wb);
                wb += 4;
                int iw = iw0 + kw * DW;
                float x0 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                iw += SW;
                float x1 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                iw += SW;
                float x2 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                iw += SW;
                float x3 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                acc0 = mad((float4)(x0), wv, acc0);
                acc1 = mad((float4)(x1), wv, acc1);
                acc2 = mad((float4)(x2), wv, acc2);
                acc3 = mad((float4)(x3), wv, acc3);
            }
        }
    }
    int plane = OH * OW, pix = oh * OW + ow0;
    if (S > 1) { /* a partial sum: bias and activation come in splitk_reduce */
        int po = parto + sl * N * O * plane;
        store_oc4(part, po, (acc0), n, o0, O, plane, pix);
        if (ow0 + 1 < OW) store_oc4(part, po, (acc1), n, o0, O, plane, pix + 1);
        if (ow0 + 2 < OW) store_oc4(part, po, (acc2), n, o0, O, plane, pix + 2);
        if (ow0 + 3 < OW) store_oc4(part, po, (acc3), n, o0, O, plane, pix + 3);
        return;
    }
    float4 b = bias4(bias, bo, has_bias, o0, O);
    store_oc4(y, yo, activate4((acc0) + b, act, aa, ab), n, o0, O, plane, pix);
    if (ow0 + 1 < OW) store_oc4(y, yo, activate4((acc1) + b, act, aa, ab), n, o0, O, plane, pix + 1);
    if (ow0 + 2 < OW) store_oc4(y, yo, activate4((acc2) + b, act, aa, ab), n, o0, O, plane, pix + 2);
    if (ow0 + 3 < OW) store_oc4(y, yo, activate4((acc3) + b, act, aa, ab), n, o0, O, plane, pix + 3);
}

/* y[n][o][p] = sum_c W[o][c] x[n][c][p]: per work-item 4 channels (lanes) x 4 pixels */
__kernel void conv1x1_oc4(__global const float *x, int xo, __global const wtype *wp, int wpo,
                          __global const float *bias, int bo, int has_bias, __global float *y, int yo,
                          int N, int C, int HW, int O, int OB, int act, float aa, float ab,
                          int S, __global float *part, int parto) {
    int pb = get_global_id(0), ob = get_global_id(1), ns = get_global_id(2);
    int p0 = pb * 4;
    int n = ns / S, sl = ns - n * S;
    if (p0 >= HW || ob >= OB || n >= N) return;
    int cs = (C + S - 1) / S, c_lo = sl * cs, c_hi = min(C, c_lo + cs);
    __global const float *xb = x + xo + n * C * HW + p0;
    __global const wtype *wb = wp + wpo + ob * C * 4;
    float4 a0 = (float4)(0.0f), a1 = (float4)(0.0f), a2 = (float4)(0.0f), a3 = (float4)(0.0f);
    if (p0 + 4 <= HW) {
        for (int c = c_lo; c < c_hi; ++c) {
            float4 xv = vload4(0, xb + c * HW);
            float4 wv = LOAD_W4(c, wb);
            a0 = mad((float4)(wv.s0), xv, a0);
            a1 = mad((float4)(wv.s1), xv, a1);
            a2 = mad((float4)(wv.s2), xv, a2);
            a3 = mad((float4)(wv.s3), xv, a3);
        }
    } else {
        int rest = HW - p0;
        for (int c = c_lo; c < c_hi; ++c) {
            __global const float *xc = xb + c * HW;
            float4 xv = (float4)(xc[0], rest > 1 ? xc[1] : 0.0f, rest > 2 ? xc[2] : 0.0f, 0.0f);
            float4 wv = LOAD_W4(c, wb);
            a0 = mad((float4)(wv.s0), xv, a0);
            a1 = mad((float4)(wv.s1), xv, a1);
            a2 = mad((float4)(wv.s2), xv, a2);
            a3 = mad((float4)(wv.s3), xv, a3);
        }
    }
    int o0 = ob * 4;
    float4 r[4] = {(a0), (a1), (a2), (a3)};
    __global float *out = y + yo;
    if (S > 1) { /* a partial sum: bias and activation come in splitk_reduce */
        out = part + parto + sl * N * O * HW;
    } else {
        float4 b = bias4(bias, bo, has_bias, o0, O);
        r[0] = activate4(r[0] + (float4)(b.s0), act, aa, ab);
        r[1] = activate4(r[1] + (float4)(b.s1), act, aa, ab);
        r[2] = activate4(r[2] + (float4)(b.s2), act, aa, ab);
        r[3] = activate4(r[3] + (float4)(b.s3), act, aa, ab);
    }
    for (int l = 0; l < 4 && o0 + l < O; ++l) {
        __global float *dst = out + (n * O + o0 + l) * HW + p0;
        if (p0 + 4 <= HW) {
            vstore4(r[l], 0, dst);
        } else {
            dst[0] = r[l].s0;
            if (p0 + 1 < HW) dst[1] = r[l].s1;
            if (p0 + 2 < HW) dst[2] = r[l].s2;
        }
    }
}

__kernel void conv2d_c1(__global const float *x, int xo, __global const float *w, int wo,
                        __global const float *bias, int bo, int has_bias, __global float *y, int yo,
                        int N, int C, int H, int W, int O, int OH, int OW, int Cg, int OG,
                        int KH, int KW, int SH, int SW, int PT, int PL, int DH, int DW,
                        int act, float aa, float ab) {
    int owb = get_global_id(0), oh = get_global_id(1), no = get_global_id(2);
    int ow0 = owb * 4;
    int n = no / O, o = no - n * O;
    if (ow0 >= OW || oh >= OH || n >= N) return;
    int cin0 = (o / OG) * Cg;
    __global const float *xb = x + xo + (n * C + cin0) * H * W;
    __global const float *wb = w + wo + o * Cg * KH * KW;
    float4 acc = (float4)(0.0f);
    int ih0 = oh * SH - PT;
    int iw0 = ow0 * SW - PL;
    for (int c = 0; c < Cg; ++c) {
        for (int kh = 0; kh < KH; ++kh) {
            int ih = ih0 + kh * DH;
            if (ih < 0 || ih >= H) continue;
            __global const float *row = xb + (c * H + ih) * W;
            __global const float *wr = wb + (c * KH + kh) * KW;
            for (int kw = 0; kw < KW; ++kw) {
                float wv = wr[kw];
                int iw = iw0 + kw * DW;
                float4 xv;
                xv.s0 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                iw += SW;
                xv.s1 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                iw += SW;
                xv.s2 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                iw += SW;
                xv.s3 = (iw >= 0 && iw < W) ? row[iw] : 0.0f;
                acc = mad(xv, (float4)(wv), acc);
            }
        }
    }
    float b = has_bias ? bias[bo + o] : 0.0f;
    float4 v = activate4(acc + (float4)(b), act, aa, ab);
    __global float *dst = y + yo + ((n * O + o) * OH + oh) * OW + ow0;
    dst[0] = v.s0;
    if (ow0 + 1 < OW) dst[1] = v.s1;
    if (ow0 + 2 < OW) dst[2] = v.s2;
    if (ow0 + 3 < OW) dst[3] = v.s3;
}

/* y = act(sum of the S partial sums + bias[o] (+ res, y's shape, where has_res)) */
__kernel void splitk_reduce(__global const float *part, int parto, int S, int total, __global const float *bias,
                            int bo, int has_bias, int O, int plane, __global float *y, int yo,
                            __global const float *res, int ro, int has_res, int act, float aa, float ab) {
    int i = get_global_id(0);
    if (i >= total) return;
    float acc = has_bias ? bias[bo + (i / plane) % O] : 0.0f;
    for (int s = 0; s < S; ++s) acc += part[parto + s * total + i];
    if (has_res) acc += res[ro + i];
    y[yo + i] = activate(acc, act, aa, ab);
}
