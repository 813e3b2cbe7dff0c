/* inference (x86infer): x86.ConvDepthwise, a 1x1 convolution and the depthwise convolution that alone
 * reads its output, strip by strip of the depthwise's output rows. Generic over `vf`; included by
 * isa_body.h after pointwise_impl.h and depthwise_impl.h, whose tiles it runs.
 *
 * Why: MobileNetV2's expansions write the largest tensors of the model (96 x 112 x 112 floats: 4.8
 * MB), and the depthwise convolution after each reads them straight back, from L3 at best. Here the
 * 1x1's register tiles write the rows a strip of the depthwise needs into a thread's scratch, already
 * padded for it ([block][row][padded column][16]: the depthwise's channels-last layout with a block's
 * 16 channels side by side), and the depthwise tiles read them from there while they are in L2. The
 * expanded tensor is never stored whole.
 *
 * Work: each thread takes a range of output rows of an image (the threads' ranges equal, to a row),
 * strip after strip. The input rows that two strips of a range share (kernel height - stride) move to
 * the top of the scratch rather than being computed again; two ranges compute theirs each. The
 * scratch's padding columns are zeroed at a thread's first item and never written after; padding
 * rows are zeroed by the strips that have them. */
#ifndef MNN_X86_PWDW_IMPL_H
#define MNN_X86_PWDW_IMPL_H

typedef struct {
    FN(pw_job) pw;           /* the 1x1's tiles; x, y and y_p0 set per image and row */
    x86_conv_geom gp;        /* the 1x1's geometry, its output NC16 (the scratch's rows) */
    x86_epilogue ep;         /* the 1x1's epilogue with its bias */
    const float *x, *wd, *bd;
    float *y, *work;
    const x86_conv_geom *gd; /* the depthwise's (its C: the 1x1's O) */
    const x86_epilogue *ed;
    int64_t per_thread, SR, RIN, PW, blocks, ranges, cx, cy;
    int ready[DW_MAX_WORKERS];
} FN(pd_job);

/* padded rows [py_a, py_b) of the strip that starts at padded row py0: the 1x1 of input row py - pt
 * into scratch row py - py0 of every block, or zeros for the padding rows */
static void FN(pd_rows)(FN(pd_job) *J, FN(pw_job) *pw, float *T, int64_t py0, int64_t py_a, int64_t py_b) {
    const x86_conv_geom *gd = J->gd;
    const int64_t W = gd->W, PW = J->PW, bs = J->RIN * PW * X86_NC16;
    for (int64_t py = py_a; py < py_b; ++py) {
        const int64_t sy = py - gd->pt;
        float *row = T + (py - py0) * PW * X86_NC16;
        if (sy < 0 || sy >= gd->H) {
            for (int64_t b = 0; b < J->blocks; ++b) memset(row + b * bs, 0, (size_t)(PW * X86_NC16) * sizeof(float));
            continue;
        }
        pw->y = row + gd->pl * X86_NC16, pw->y_p0 = sy * W;
        for (int64_t q = 0; q < pw->panels; ++q) {
            const int nv = pw->O - q * NR <= VLEN ? 1 : GEMM_NV; /* a last panel of one vector's channels */
            for (int64_t p0 = sy * W; p0 < (sy + 1) * W; p0 += MR) {
                const int rows = (int)((sy + 1) * W - p0 < MR ? (sy + 1) * W - p0 : MR);
                if (rows == MR && nv == GEMM_NV) FN(pw_tile)(MR, GEMM_NV, 0, pw, p0, q);
                else FN(pw_tile_any)(rows, nv, pw, p0, q);
            }
        }
    }
}

/* the depthwise's output rows [r0, r1) from the strip in T (padded row r0*sh at its row 0), VLEN
 * channels at a time (depthwise_cl_impl.h: cl_out_rows) */
static void FN(pd_out)(FN(pd_job) *J, const float *T, const float *wv, float *y, float *buf, int64_t r0, int64_t r1) {
    const x86_conv_geom *gd = J->gd;
    const int64_t bs = J->RIN * J->PW * X86_NC16, plane = gd->OH * gd->OW, taps = gd->kh * gd->kw;
    for (int64_t c0 = 0; c0 < gd->C; c0 += VLEN) {
        const int nc = (int)(gd->C - c0 < VLEN ? gd->C - c0 : VLEN);
        const vf b0 = J->bd ? vf_load_n(J->bd + c0, nc) : vf_zero();
        float *yc = y + (gd->out_nc16 ? x86_nc16_at(c0, 0, plane) : c0 * plane);
        FN(cl_out_rows)(T + c0 / X86_NC16 * bs + c0 % X86_NC16, X86_NC16, J->PW, gd, wv + c0 * taps, b0, J->ed, nc,
                        r0, r1, yc, buf);
    }
}

static void FN(pd_task)(void *ctx, int64_t item, int worker) {
    FN(pd_job) *J = (FN(pd_job) *)ctx;
    const x86_conv_geom *gd = J->gd;
    const int64_t taps = gd->kh * gd->kw, Tn = J->blocks * J->RIN * J->PW * X86_NC16;
    float *T = J->work + worker * J->per_thread, *wv = T + Tn, *buf = wv + J->blocks * X86_NC16 * taps;
    if (!J->ready[worker]) { /* the padding columns, and the tap vectors of every group of channels */
        const int64_t pl = gd->pl, pr = J->PW - pl - gd->W;
        for (int64_t r = 0; r < J->blocks * J->RIN; ++r) {
            float *row = T + r * J->PW * X86_NC16;
            memset(row, 0, (size_t)(pl * X86_NC16) * sizeof(float));
            memset(row + (pl + gd->W) * X86_NC16, 0, (size_t)(pr * X86_NC16) * sizeof(float));
        }
        for (int64_t c0 = 0; c0 < gd->C; c0 += VLEN)
            FN(cl_weights)(J->wd, taps, c0, (int)(gd->C - c0 < VLEN ? gd->C - c0 : VLEN), wv + c0 * taps);
        J->ready[worker] = 1;
    }
    const int64_t n = item / J->ranges, part = item % J->ranges;
    const int64_t oh0 = gd->OH * part / J->ranges, oh1 = gd->OH * (part + 1) / J->ranges;
    const int64_t shared = (gd->kh - 1) * gd->dh + 1 - gd->sh, row = J->PW * X86_NC16, bs = J->RIN * row;
    FN(pw_job) pw = J->pw;
    pw.x = J->x + n * J->cx * gd->H * gd->W;
    float *y = J->y + n * J->cy * gd->OH * gd->OW;
    for (int64_t r0 = oh0; r0 < oh1; r0 += J->SR) {
        const int64_t r1 = r0 + J->SR < oh1 ? r0 + J->SR : oh1;
        const int64_t py0 = r0 * gd->sh, py1 = (r1 - 1) * gd->sh + (gd->kh - 1) * gd->dh + 1;
        int64_t carried = 0;
        if (r0 > oh0 && shared > 0) { /* the previous strip read padded rows up to py0 + shared */
            for (int64_t b = 0; b < J->blocks; ++b)
                memmove(T + b * bs, T + b * bs + J->SR * gd->sh * row, (size_t)(shared * row) * sizeof(float));
            carried = shared;
        }
        FN(pd_rows)(J, &pw, T, py0, py0 + carried, py1);
        FN(pd_out)(J, T, wv, y, buf, r0, r1);
    }
}

/* N images: x (the 1x1's input: gp->C channels of gp->H x gp->W, NC16 where gp->in_nc16), wt (W^T in
 * pack_b panels), bias and ep the 1x1's; wd ([C][kh*kw]), bd and ed the depthwise's, gd its geometry
 * (gd->C: the 1x1's output channels; gd->out_nc16: the output's layout); work: x86_pwdw_floats per
 * thread */
static void FN(pointwise_dw)(const float *x, const float *wt, const float *bias, const float *wd, const float *bd,
                             float *y, int64_t N, const x86_conv_geom *gp, const x86_epilogue *ep,
                             const x86_conv_geom *gd, const x86_epilogue *ed, float *work, int threads) {
    FN(pd_job) J;
    memset(&J, 0, sizeof J);
    J.gp = *gp, J.gp.out_nc16 = 1, J.gp.out_stream = 0;
    J.ep = *ep, J.ep.bias = bias;
    const int64_t K = gp->C, O = gd->C, P = gp->H * gp->W;
    J.pw.x = x, J.pw.wt = wt, J.pw.bias = bias, J.pw.res = NULL, J.pw.K = K, J.pw.O = O, J.pw.P = P;
    J.pw.Op = x86_nc16_channels(O), J.pw.g = &J.gp, J.pw.e = &J.ep, J.pw.stream = 0;
    J.pw.a_ps = gp->in_nc16 ? X86_NC16 : 1, J.pw.a_ks = gp->in_nc16 ? 1 : P;
    J.pw.panels = (O + NR - 1) / NR;
    J.x = x, J.wd = wd, J.bd = bd, J.y = y, J.work = work, J.gd = gd, J.ed = ed;
    J.blocks = (O + X86_NC16 - 1) / X86_NC16;
    J.PW = x86_pwdw_width(gd), J.SR = x86_pwdw_rows(gd), J.RIN = x86_pwdw_rows_in(gd, J.SR);
    J.pw.yP = J.RIN * J.PW;
    J.per_thread = x86_pwdw_floats(gd);
    J.cx = gp->in_nc16 ? x86_nc16_channels(K) : K, J.cy = gd->out_nc16 ? x86_nc16_channels(O) : O;
    if (threads > DW_MAX_WORKERS) threads = DW_MAX_WORKERS;
    /* a range of rows per thread (in all, over the images), each at least a row */
    int64_t ranges = N >= threads ? 1 : (threads + N - 1) / N;
    if (ranges > gd->OH) ranges = gd->OH;
    J.ranges = ranges;
    x86_parallel(threads, N * ranges, FN(pd_task), &J);
}

#endif
