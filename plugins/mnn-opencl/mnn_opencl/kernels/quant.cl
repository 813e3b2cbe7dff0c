/* The integer ops of dynamically quantized models (mnn_core.backend.kit.quant): QuantizeLinear and casts
 * to 8 bits, ConvInteger, MatMulInteger and ONNX Runtime's DynamicQuantizeLSTM. int8 / uint8 tensors
 * are uchar buffers read with a signedness flag; integer sums are exact in int, scaled once in float. */

inline int q_byte(__global const uchar *p, int i, int is_signed) {
    return is_signed ? (int)(char)p[i] : (int)p[i];
}

/* mode 0: saturate(rint(x / scale) + zero_point), per tensor or per channel ((i / inner) % channels);
 * mode 1: a Cast of float32 (truncated) or int32 to 8 bits, the low byte as C converts */
__kernel void quantize_bytes(__global const float *x, int xo, __global const float *scale, int so,
                             __global const uchar *zp, int zo, __global uchar *y, int yo, int total, int mode,
                             int from_int, int out_signed, int inner, int channels, int has_zp) {
    int i = get_global_id(0);
    if (i >= total) return;
    int q;
    if (mode == 0) {
        int c = (i / inner) % channels;
        float z = has_zp ? (float)q_byte(zp + zo, c, out_signed) : 0.0f;
        float v = rint(x[xo + i] / scale[so + c]) + z;
        q = (int)(out_signed ? clamp(v, -128.0f, 127.0f) : clamp(v, 0.0f, 255.0f));
    } else {
        q = from_int ? as_int(x[xo + i]) : (int)trunc(x[xo + i]);
    }
    y[yo + i] = (uchar)(q & 255);
}

/* 2-D ConvInteger: flags 1 x signed, 2 w signed, 4 x zero point, 8 w zero point, 16 w's per channel */
__kernel void conv_int(__global const uchar *x, int xo, __global const uchar *w, int wo, __global const uchar *xzp,
                       int xzo, __global const uchar *wzp, int wzo, __global int *y, int yo, int total, int flags,
                       int C, int H, int W, int M, int OH, int OW, int KH, int KW, int SH, int SW, int PH, int PW,
                       int DH, int DW, int G) {
    int i = get_global_id(0);
    if (i >= total) return;
    int ox = i % OW, t = i / OW;
    int oy = t % OH;
    t /= OH;
    int m = t % M, n = t / M;
    int xs = flags & 1, ws = (flags >> 1) & 1;
    int xz = (flags & 4) ? q_byte(xzp + xzo, 0, xs) : 0;
    int wz = (flags & 8) ? q_byte(wzp + wzo, (flags & 16) ? m : 0, ws) : 0;
    int cg = C / G, g = m / (M / G);
    int acc = 0;
    for (int c = 0; c < cg; ++c) {
        int xc = (n * C + g * cg + c) * H, wc = (m * cg + c) * KH;
        for (int ky = 0; ky < KH; ++ky) {
            int iy = oy * SH + ky * DH - PH;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < KW; ++kx) {
                int ix = ox * SW + kx * DW - PW;
                if (ix < 0 || ix >= W) continue;
                acc += (q_byte(x + xo, (xc + iy) * W + ix, xs) - xz) * (q_byte(w + wo, (wc + ky) * KW + kx, ws) - wz);
            }
        }
    }
    y[yo + i] = acc;
}

/* flags 1 A signed, 2 B signed, 4 A zero point, 8 B zero point, 16 A's per row, 32 B's per column */
__kernel void matmul_int(__global const uchar *a, int ao, __global const uchar *b, int bo, __global const uchar *azp,
                         int azo, __global const uchar *bzp, int bzo, __global int *y, int yo, int total, int flags,
                         int M, int K, int N, int b_batch) {
    int i = get_global_id(0);
    if (i >= total) return;
    int col = i % N, t = i / N;
    int row = t % M, bt = t / M;
    int sa = flags & 1, bs = (flags >> 1) & 1;
    int az = (flags & 4) ? q_byte(azp + azo, (flags & 16) ? row : 0, sa) : 0;
    int bz = (flags & 8) ? q_byte(bzp + bzo, (flags & 32) ? col : 0, bs) : 0;
    a += ao + t * K;
    b += bo + bt * b_batch + col;
    int acc = 0;
    for (int k = 0; k < K; ++k) acc += (q_byte(a, k, sa) - az) * (q_byte(b, k * N, bs) - bz);
    y[yo + i] = acc;
}

/* ONNX Runtime's dynamic uint8 parameters of float blocks, one work group of 256 per block: the range
 * widened to hold 0; (scale, zero point) = ((hi - lo) / 255 or 1, clamp(rint(-lo / scale), 0, 255)) */
__kernel void dq_range(__global const float *src, int so, __global float *params, int po, int base, int stride,
                       int count, int out_at) {
    __local float lo_s[256], hi_s[256];
    int lid = get_local_id(0), blk = get_group_id(0);
    __global const float *s = src + so + base + blk * stride;
    float lo = 0.0f, hi = 0.0f;
    for (int i = lid; i < count; i += 256) {
        lo = fmin(lo, s[i]);
        hi = fmax(hi, s[i]);
    }
    lo_s[lid] = lo;
    hi_s[lid] = hi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int half_ = 128; half_ > 0; half_ >>= 1) {
        if (lid < half_) {
            lo_s[lid] = fmin(lo_s[lid], lo_s[lid + half_]);
            hi_s[lid] = fmax(hi_s[lid], hi_s[lid + half_]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        float l = lo_s[0], h = hi_s[0];
        float scale = l == h ? 1.0f : (h - l) / 255.0f;
        params[po + out_at + 2 * blk] = scale;
        params[po + out_at + 2 * blk + 1] = clamp(rint(-l / scale), 0.0f, 255.0f);
    }
}

/* every step's input projection: X quantized with params[0..1], times W [D, I, 4H] minus its zero point */
__kernel void dq_lstm_x(__global const float *x, int xo, __global const uchar *w, int wo, __global const float *ws_,
                        int wso, __global const uchar *wzp, int wzo, __global const float *params, int pmo,
                        __global float *gx, int gxo, int total,
                        int rows, int I, int G4, int flags, int scale_cols, int zp_cols) {
    int i = get_global_id(0);
    if (i >= total) return;
    int j = i % G4, t = i / G4;
    int row = t % rows, d = t / rows;
    int sgn = flags & 1;
    float sx = params[pmo], zx = params[pmo + 1];
    int wz = (flags & 2) ? q_byte(wzp + wzo, d * zp_cols, sgn) : 0;
    int acc = 0;
    for (int k = 0; k < I; ++k) {
        int q = (int)(clamp(rint(x[xo + row * I + k] / sx) + zx, 0.0f, 255.0f) - zx);
        acc += q * (q_byte(w + wo, (d * I + k) * G4 + j, sgn) - wz);
    }
    gx[gxo + i] = (float)acc * (sx * ws_[wso + d * scale_cols + (scale_cols == 1 ? 0 : j)]);
}

inline float dq_sigm(float v) {
    float e = exp(-fabs(v));
    return v >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

inline float dq_clip(float v, float c) {
    return c > 0.0f ? clamp(v, -c, c) : v;
}

/* one step of DynamicQuantizeLSTM per (direction, batch, unit); the scratch holds the parameters (0), gx
 * and the state (h in two slots, this step reading `cur`; c). flags: 1 bias, 2 peepholes, 4 Y,
 * 8 input_forget, 16 R signed, 32 R zero point */
__kernel void dq_lstm_step(__global float *sc, int sco, __global const uchar *r, int ro_, __global const float *rsc,
                           int rso, __global const uchar *rzp, int rzo, __global const float *bias, int bo,
                           __global const float *peep, int po, __global float *y, int yo, int total, int T, int t,
                           int B, int H, int D, int cur, int flags, int dirs_mode, int scale_cols, int zp_cols,
                           float clip, int gx_at, int state_at) {
    int i = get_global_id(0);
    if (i >= total) return;
    sc += sco;
    int j = i % H, tt = i / H;
    int b = tt % B, d = tt / B;
    int dbh = D * B * H, bh = B * H, g4 = 4 * H;
    int reverse = dirs_mode == 1 || (dirs_mode == 2 && d == 1);
    int tx = reverse ? T - 1 - t : t;
    int rs = (flags >> 4) & 1;
    int rz = (flags & 32) ? q_byte(rzp + rzo, d * zp_cols, rs) : 0;
    float sh = sc[2 + 2 * d], zh = sc[3 + 2 * d];
    int h_at = state_at + cur * dbh + d * bh + b * H;
    int4 acc = (int4)(0);
    r += ro_;
    for (int k = 0; k < H; ++k) {
        int q = (int)(clamp(rint(sc[h_at + k] / sh) + zh, 0.0f, 255.0f) - zh);
        int o = (d * H + k) * g4 + j;
        acc += q * ((int4)(q_byte(r, o, rs), q_byte(r, o + H, rs), q_byte(r, o + 2 * H, rs), q_byte(r, o + 3 * H, rs)) - rz);
    }
    int accs[4] = {acc.x, acc.y, acc.z, acc.w};
    float gate[4];
    for (int g = 0; g < 4; ++g) {
        int col = g * H + j;
        float v = sc[gx_at + ((d * T + tx) * B + b) * g4 + col] +
                  (float)accs[g] * (sh * rsc[rso + d * scale_cols + (scale_cols == 1 ? 0 : col)]);
        if (flags & 1) v += bias[bo + d * 2 * g4 + col] + bias[bo + d * 2 * g4 + g4 + col];
        gate[g] = v;
    }
    float pi = 0.0f, pof = 0.0f, pf = 0.0f;
    if (flags & 2) {
        pi = peep[po + d * 3 * H + j];
        pof = peep[po + d * 3 * H + H + j];
        pf = peep[po + d * 3 * H + 2 * H + j];
    }
    int at = state_at + d * bh + b * H + j;
    float c = sc[2 * dbh + at];
    float ig = dq_sigm(dq_clip(gate[0] + pi * c, clip));
    float fg = (flags & 8) ? 1.0f - ig : dq_sigm(dq_clip(gate[2] + pf * c, clip));
    c = fg * c + ig * tanh(dq_clip(gate[3], clip));
    float h = dq_sigm(dq_clip(gate[1] + pof * c, clip)) * tanh(c);
    sc[2 * dbh + at] = c;
    sc[(1 - cur) * dbh + at] = h;
    if (flags & 4) y[yo + ((tx * D + d) * B + b) * H + j] = h;
}
