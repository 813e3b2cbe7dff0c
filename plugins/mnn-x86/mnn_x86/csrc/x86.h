/* mnn-x86: what the ISA translation units provide and the op layer uses.
 *
 * Each ISA level (scalar, avx2, avx512) is one translation unit (isa_*.c)
 * compiled with its own flags; it fills one `x86_kernels` table. dispatch.c
 * (baseline flags) checks the CPU with cpuid and hands out the table; the op
 * layer (op_*.c) calls kernels only through it, so no instruction the CPU
 * lacks ever runs.
 *
 * Packed GEMM operands (full K, zero padded; MR and NR depend on the ISA):
 *   A: panel p holds rows [p*MR, p*MR+MR):   ap[p*MR*K + k*MR + r]
 *   B: panel q holds cols [q*NR, q*NR+NR):   bp[q*NR*K + k*NR + c]
 */
#ifndef MNN_X86_H
#define MNN_X86_H

#include <stddef.h>
#include <stdint.h>

#include "mnn_core/abi.h" /* enum mnn_activation: an epilogue's act (MNN_ACT_*) */

#ifdef __cplusplus
extern "C" {
#endif

enum x86_binop { X86_ADD = 0, X86_SUB, X86_MUL, X86_DIV, X86_MAX, X86_MIN };

/* What happens to a result before it is stored:
 *   y = act(alpha * acc + beta * bias[row * bias_rs + col * bias_cs])
 * bias_cs is 0 (one value per row) or 1 (a contiguous row of values). */
typedef struct x86_epilogue {
    float alpha, beta;
    const float *bias; /* NULL: no bias term */
    int64_t bias_rs, bias_cs;
    int32_t act;
    float act_alpha, act_beta;
} x86_epilogue;

/* The one backend-private layout (mnn_tensor.layout == X86_LAYOUT_NC16): channel blocks of 16,
 * [N][ceil(C/16)][H][W][16]. Channel c of pixel (h, w) is at ((n*CB + c/16)*H + h)*W*16 + w*16 + c%16.
 * The padding lanes of a last partial block are don't-care: a writer may leave anything there
 * (depthwise and 1x1 write what their zero-padded weights give), a reader never lets them reach a
 * real channel. 16 lanes: one AVX-512 vector, two AVX2 halves, sixteen scalar lanes (layouts.py
 * says which ISAs choose it). */
#define X86_LAYOUT_NC16 1
#define X86_NC16 16
static inline int64_t x86_nc16_channels(int64_t C) { return (C + X86_NC16 - 1) / X86_NC16 * X86_NC16; }
/* the offset of channel c at pixel p in one NC16 image of `plane` pixels */
static inline int64_t x86_nc16_at(int64_t c, int64_t p, int64_t plane) {
    return c / X86_NC16 * plane * X86_NC16 + p * X86_NC16 + c % X86_NC16;
}

/* One group of a convolution: C input channels of H x W to OH x OW. in_nc16 / out_nc16: the input
 * / output is kept in NC16 (only the depthwise, the 1x1 and the Winograd kernels take it; 0 everywhere
 * else). out_cl: the output is dense channels-last, [N][OH][OW][C] (only the depthwise kernel writes
 * it: x86.DepthwiseNHWC, a depthwise convolution and the transpose to NHWC after it). */
typedef struct x86_conv_geom {
    int64_t C, H, W, OH, OW;
    int64_t kh, kw, sh, sw, dh, dw, pt, pl;
    int32_t in_nc16, out_nc16;
    int32_t out_stream; /* stores around the caches: the output is larger than they are */
    int32_t out_cl;
} x86_conv_geom;

/* Pooling of planes; kind 0 max, 1 average. An average is the window's sum
 * times inv_rows[oh] * inv_cols[ow] (1 / the window's height and width as the
 * op counts them), so the kernel is agnostic of padding conventions. nc16: the
 * input and output are NC16 (layouts.py), the planes 16-channel blocks. */
typedef struct x86_pool_geom {
    int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl;
    int32_t kind, nc16;
    const float *inv_rows, *inv_cols;
} x86_pool_geom;

struct x86_bf16_conv; /* bf16.h */

typedef struct x86_kernels {
    const char *name;
    int32_t mr, nr, vlen;
    void (*pack_a)(const float *a, int64_t rs, int64_t cs, int64_t M, int64_t K, float *ap, int threads);
    void (*pack_b)(const float *b, int64_t rs, int64_t cs, int64_t K, int64_t N, float *bp, int threads);
    /* B = im2col of one group's input (C*kh*kw rows) for output columns [n0, n0 + ncols), packed */
    void (*im2col_b)(const float *x, const x86_conv_geom *g, int64_t n0, int64_t ncols, float *bp, int threads);
    void (*gemm)(int64_t M, int64_t N, int64_t K, const float *ap, const float *bp, float *c, int64_t ldc,
                 const x86_epilogue *e, int threads);
    /* planes = N*C; w: [C][kh*kw]; bias: C floats or NULL; work: depthwise_work_floats per thread */
    void (*depthwise)(const float *x, const float *w, const float *bias, float *y, int64_t planes,
                      const x86_conv_geom *g, const x86_epilogue *e, float *work, int threads);
    /* y = a op b over ndim (1..8) collapsed dims; sa/sb are element strides (0: broadcast),
     * the innermost stride of each is 0 or 1 */
    void (*binary)(int op, const float *a, const float *b, float *y, int ndim, const int64_t *dims,
                   const int64_t *sa, const int64_t *sb, int threads);
    void (*activation)(const x86_epilogue *e, const float *x, float *y, int64_t n, int threads);
    /* y[o][c][i] = x[o][c][i] * scale[c] + shift[c]   (o < outer, c < C, i < inner) */
    void (*channel_affine)(const float *x, const float *scale, const float *shift, float *y, int64_t outer,
                           int64_t C, int64_t inner, int threads);
    void (*pool)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, float *work, int threads);
    /* y[r] = max (kind 0) or mean (kind 1) of the n floats of row r */
    void (*reduce_rows)(const float *x, float *y, int64_t rows, int64_t n, int kind, int threads);
    /* (log-)softmax over the middle axis of [outer][axis][inner] */
    void (*softmax)(const float *x, float *y, int64_t outer, int64_t axis, int64_t inner, int log, int threads);
    /* each row of n normalized to mean 0, variance 1 (+ eps), then scaled and shifted:
     * per element of the row (per_row == 0; scale/shift n floats or NULL) or by
     * channel r % C (per_row == C; scale/shift C floats) */
    void (*normalize_rows)(const float *x, float *y, int64_t rows, int64_t n, float eps, const float *scale,
                           const float *shift, int64_t per_row, int threads);
    /* -- inference (x86infer) -- */
    /* Winograd F(4x4, 3x3), stride 1, one group, N images whose tiles are one sequence (winograd_impl.h). u: 36 packed A
     * operands of the transformed weights, u_stride floats apart (gemm_t: 36 packed B operands of
     * their transposes); tc, per_chunk, gemm_t, work: x86_wino_plan. bf16 (bf16.h): NULL, or the 36
     * GEMMs on bf16 operands (precision="low"): its w holds them packed as bf16, in place of u */
    void (*winograd)(const float *x, const float *u, int64_t u_stride, int64_t O, const float *bias, float *y,
                     int64_t N, const x86_conv_geom *g, const x86_epilogue *e, int64_t tc, int per_chunk, int gemm_t,
                     float *work, int threads, const struct x86_bf16_conv *bf16);
    /* the packed GEMM with B unpacked: row k of the K x N matrix at b + k*ldb (1x1 convolutions on NCHW) */
    void (*gemm_rows)(int64_t M, int64_t N, int64_t K, const float *ap, const float *b, int64_t ldb, float *c,
                      int64_t ldc, const x86_epilogue *e, int threads);
    /* y[o*ldy + p] = ct[p*O + o] for o in [o0, o1), p < P: a transposed convolution's C^T (P x O)
     * into NCHW */
    void (*transpose_out)(const float *ct, int64_t P, int64_t O, float *y, int64_t ldy, int64_t o0, int64_t o1);
    /* rows [kk0, kk1) of a transposed convolution's X^T for pixels [p0, p0 + P) into packed A panels,
     * from the padded input xp (C planes of PH x PW: every tap inside) */
    void (*im2col_a)(const float *xp, const x86_conv_geom *g, int64_t PH, int64_t PW, float *ap, int64_t kk0,
                     int64_t kk1, int64_t p0, int64_t P);
    /* a 1x1 convolution (stride 1, no padding, one group) of one image with an NC16 input or
     * output (pointwise_impl.h): x of K channels x P pixels (g->in_nc16: blocked, else NCHW), wt:
     * W^T packed as the GEMM's B (pack_b), y of O channels (g->out_nc16: blocked, else NCHW); res:
     * NULL, or a tensor laid out as y added before the activation (x86.ConvAdd: a residual) */
    void (*pointwise)(const float *x, const float *wt, const float *bias, const float *res, float *y, int64_t K,
                      int64_t O, int64_t P, const x86_conv_geom *g, const x86_epilogue *e, int threads);
    /* a direct convolution for few input channels (conv_direct_impl.h: one group, dilation 1, NCHW
     * on both sides). direct_plan: output rows per work item, parts the channel blocks are split
     * into, scratch per thread (floats) and the packed weights' floats; direct_pack: the O x K
     * weights into those; direct_conv: N images, bias per output channel or NULL */
    void (*direct_plan)(const x86_conv_geom *g, int64_t N, int64_t O, int threads, int64_t *rows, int64_t *parts,
                        int64_t *worker_floats, int64_t *w_floats);
    void (*direct_pack)(const float *w, int64_t O, int64_t K, float *wd);
    void (*direct_conv)(const float *x, const float *wd, const float *bias, float *y, int64_t N, int64_t O,
                        const x86_conv_geom *g, const x86_epilogue *e, int64_t rows, int64_t parts,
                        int64_t worker_floats, float *work, int threads);
    /* the direct convolution and a max pooling pg of stride 2 across, 2 or 3 wide, after it, as one
     * op (conv_direct_impl.h: band by band); NULL in the scalar table. direct_pool_plan: pooled rows
     * per work item, parts of the channel blocks, scratch per thread (floats) */
    void (*direct_pool_plan)(const x86_conv_geom *g, const x86_pool_geom *pg, int64_t N, int64_t O, int threads,
                             int64_t *rows, int64_t *parts, int64_t *worker_floats);
    void (*direct_conv_pool)(const float *x, const float *wd, const float *bias, float *y, int64_t N, int64_t O,
                             const x86_conv_geom *g, const x86_pool_geom *pg, const x86_epilogue *e, int64_t rows,
                             int64_t parts, int64_t worker_floats, float *work, int threads);
    /* x86.ConvGlobalAvgPool with the pixels as rows (conv_gap_impl.h): y[0 .. cols) = the means over
     * P pixels of act(bias + W x) for one image x (C rows of P; nc16: NC16 blocks) and one panel wp
     * of W^T (pack_b); next: the panel to prefetch meanwhile, or NULL */
    void (*gap_panel)(const float *x, int nc16, int64_t P, int64_t C, const float *wp, const float *next,
                      const float *bias, int cols, const x86_epilogue *e, float *y);
    /* x86.ConvDepthwise (pwdw_impl.h): N images through a 1x1 (gp: its input, x, NC16 or not; wt: W^T in
     * pack_b panels; bias, ep) and the depthwise convolution of its output (gd, gd->C its output
     * channels; wd: [C][kh*kw]; bd, ed), strip by strip in a thread's scratch of x86_pwdw_floats */
    void (*pointwise_dw)(const float *x, const float *wt, const float *bias, const float *wd, const float *bd,
                         float *y, int64_t N, const x86_conv_geom *gp, const x86_epilogue *ep,
                         const x86_conv_geom *gd, const x86_epilogue *ed, float *work, int threads);
    /* gemm with A's rows read in place (row i at a + i * lda, K contiguous floats), B packed; tail: MR * K
     * floats for a last partial panel. Returns 0, having done nothing, where A should be packed instead */
    int (*gemm_a_rows)(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, float *tail, const float *bp,
                       float *c, int64_t ldc, const x86_epilogue *e, int threads);
    /* a direct convolution with the output channels along the vectors (conv_direct_oc_impl.h: one group,
     * dilation 1, any stride, NCHW on both sides); NULL in the scalar table. The same contract as
     * direct_plan, direct_pack and direct_conv above, its weights packed in blocks of two vectors of
     * output channels */
    void (*dco_plan)(const x86_conv_geom *g, int64_t N, int64_t O, int threads, int64_t *rows, int64_t *parts,
                     int64_t *worker_floats, int64_t *w_floats);
    void (*dco_pack)(const float *w, int64_t O, int64_t K, float *wd);
    void (*dco_conv)(const float *x, const float *wd, const float *bias, float *y, int64_t N, int64_t O,
                     const x86_conv_geom *g, const x86_epilogue *e, int64_t rows, int64_t parts, int64_t worker_floats,
                     float *work, int threads);
} x86_kernels;

/* scratch each thread needs (floats); vlen: the kernels' (x86_kernels.vlen) */
int64_t x86_depthwise_work_floats(const x86_conv_geom *g, int vlen);
/* the part of it that holds a small plane's flat output rows (depthwise_impl.h: dw_flat9): OH rows
 * of the padded width PW, and a vector's slack; even, to keep what follows aligned */
static inline int64_t x86_dw_flat_floats(int64_t OH, int64_t PW) { return (OH * PW + 64 + 1) / 2 * 2; }
/* The channels-last depthwise path (depthwise_cl_impl.h) works on blocks of up to 16 channels
 * (one AVX-512 vector; fewer lanes on narrower ISAs fit the same scratch) and strips of output rows
 * whose padded input rows and output pixels, 16 floats each, fit about a budget of floats:
 *   - a dense (NCHW) input, transposed into the strips: X86_DW_CL_BUDGET, a quarter of a Zen 4
 *     core's L2 beside the planes streaming through: smaller strips were slower, larger ones no
 *     faster;
 *   - an NC16 input, only copied: X86_DW_CL_BUDGET_NC16, an L1 data cache, faster there; a dense
 *     input was level either way. (The measurements: benchmarks/RESULTS.md, "Notes moved from the
 *     code".) */
#define X86_DW_CL_LANES 16
#define X86_DW_CL_BUDGET (64 * 1024)     /* 256 KB */
#define X86_DW_CL_BUDGET_NC16 (8 * 1024) /* 32 KB */
static inline int64_t x86_dw_cl_rows(const x86_conv_geom *g) {
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t per_row = (g->sh * PW + g->OW) * X86_DW_CL_LANES, fixed = (g->kh - 1) * g->dh * PW * X86_DW_CL_LANES;
    const int64_t budget = g->in_nc16 ? X86_DW_CL_BUDGET_NC16 : X86_DW_CL_BUDGET;
    int64_t rows = (budget - fixed) / (per_row > 0 ? per_row : 1);
    if (rows > g->OH) rows = g->OH;
    return rows > 1 ? rows : 1;
}
/* its scratch per thread: the strip's padded input rows, its output pixels (and a vector's
 * slack), the tap vectors */
static inline int64_t x86_dw_cl_floats(const x86_conv_geom *g) {
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1, SR = x86_dw_cl_rows(g);
    const int64_t RIN = (SR - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    return (RIN * PW + SR * g->OW + X86_DW_CL_LANES + (g->kh * g->kw + X86_DW_CL_LANES)) * X86_DW_CL_LANES;
}
/* x86.ConvDepthwise (pwdw_impl.h): a 1x1 and the depthwise after it, strip by strip. Its scratch per
 * thread holds a strip's padded input rows of the depthwise for all its channels (16 floats a pixel
 * and block), which the 1x1 writes and the depthwise reads: about X86_PWDW_BUDGET floats, so that
 * they stay in L2 beside the 1x1's weights. */
#define X86_PWDW_BUDGET (96 * 1024) /* 384 KB */
static inline int64_t x86_pwdw_width(const x86_conv_geom *g) { /* every column read, and every one the 1x1 writes */
    const int64_t read = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    return read > g->pl + g->W ? read : g->pl + g->W;
}
static inline int64_t x86_pwdw_rows_in(const x86_conv_geom *g, int64_t rows) {
    return (rows - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}
static inline int64_t x86_pwdw_rows(const x86_conv_geom *g) { /* output rows per strip */
    const int64_t row = x86_nc16_channels(g->C) * x86_pwdw_width(g);
    int64_t rows = (X86_PWDW_BUDGET / row - (g->kh - 1) * g->dh - 1) / g->sh + 1;
    if (rows > g->OH) rows = g->OH;
    return rows > 1 ? rows : 1;
}
/* the strip's rows, the tap vectors of every channel and a dense output's pixels of one strip */
static inline int64_t x86_pwdw_floats(const x86_conv_geom *g) {
    const int64_t lanes = x86_nc16_channels(g->C), SR = x86_pwdw_rows(g);
    return lanes * (x86_pwdw_rows_in(g, SR) * x86_pwdw_width(g) + g->kh * g->kw) + (SR * g->OW + X86_NC16) * X86_NC16;
}
/* Which path a depthwise convolution takes (one place: the kernels and their scratch sizes ask it):
 * the channels-last blocks of depthwise_cl_impl.h (vlen lanes), unless their lanes are mostly empty
 * or the plane path (depthwise_impl.h) is at its best. Measured on Zen 4, one thread, MobileNetV2's
 * layers in the model (AVX-512; AVX2 alike): channels-last is 2x faster on 7x7 planes, 1.25x on
 * 14x14, 1.3-3.5x with stride 2 (no even/odd split), 2-3x with 5x5 and 7x7 kernels. The plane path
 * keeps
 *   - few channels: 4 channels fill a quarter of a 16-lane block (2.6x slower than the planes);
 *   - 3x3 stride 1 on wide rows (6 vectors or more: every plane-path vector full, no split), where
 *     the transposes cost more than they save: 112x112 on AVX-512 1.06x slower, 56x56 and 112x112
 *     on AVX2 1.2x slower;
 *   - the scalar build: one lane has nothing to gain and the transposes make it 2x slower.
 * An NC16 input or output always takes this path: its blocks are already channels-last. */
static inline int x86_dw_channels_last(const x86_conv_geom *g, int vlen) {
    if (g->in_nc16 || g->out_nc16 || g->out_cl) return 1; /* only this path reads/writes these */
    const int64_t lanes = (g->C + vlen - 1) / vlen * vlen;
    const int wide_3x3 = g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->OW >= 6 * vlen;
    return vlen > 1 && 4 * g->C >= 3 * lanes && !wide_3x3;
}
/* How a GEMM convolution is cut into work items (image x group x chunk of
 * output columns): the columns per chunk, and whether each thread takes whole
 * items (per_item, one scratch chunk per thread) or all threads share each one */
void x86_conv_plan(const x86_kernels *k, const x86_conv_geom *g, int64_t images, int64_t og, int threads,
                   int64_t *chunk_cols, int32_t *per_item);
int64_t x86_pool_work_floats(const x86_pool_geom *g);
/* where, in a thread's scratch of per_thread floats, its kh*kw tap offsets (int64) start */
int64_t x86_scratch_offsets_at(int64_t per_thread, int64_t kh, int64_t kw);

/* the chunk scratch of a Winograd convolution: one chunk's (per floats: gather, V, M) per thread when
 * each takes whole chunks, else one shared chunk and a gather (36 * tcp) per further thread; gemm_t's
 * V^T buffers follow it */
static inline int64_t x86_wino_chunk_floats(int64_t per, int64_t tcp, int threads, int per_chunk) {
    if (threads < 1) threads = 1;
    return per_chunk ? threads * per : per + 36 * tcp * (threads - 1);
}
/* inference (x86infer): how a Winograd convolution is cut into chunks of
 * tiles (tc: a multiple of NR, or a thread's share of a one-chunk plane), whether each thread takes whole chunks,
 * whether its GEMMs run transposed (gemm_t: all tiles fit one vector, or an NC16 side: nc16) and
 * the scratch it needs (floats, all threads) */
void x86_wino_plan(const x86_kernels *k, int64_t N, int64_t C, int64_t O, int64_t OH, int64_t OW, int threads, int nc16,
                   int64_t *tc, int32_t *per_chunk, int32_t *gemm_t, int64_t *work_floats);

/* inference (x86infer), op_threadpool.c: run fn(ctx, i, worker) for i in [0, n) on up to `threads`
 * threads (the caller is worker 0; worker ids stay below threads, for per-thread scratch). Items are
 * claimed one at a time, so a thread the OS does not schedule never holds the others up. */
typedef void (*x86_task_fn)(void *ctx, int64_t item, int worker);
void x86_parallel(int threads, int64_t n, x86_task_fn fn, void *ctx);
/* How many items a parallel loop cuts its work into per thread, at least (GEMM blocks, direct and
 * depthwise convolution strips, ranges of the light loops): a thread's last item is what it may
 * wait for at the end, while items cost more the more there are. */
#ifndef X86_ITEMS_PER_THREAD
#define X86_ITEMS_PER_THREAD 4
#endif
/* The light loops (element-wise ops, pooling): fn(ctx, lo, hi, worker) over [0, n) cut into ranges of
 * at least `grain` indices, a few per thread, through x86_parallel; one range on the caller when n is
 * below two grains or threads is 1. The same pool as the heavy loops: a second pool of spinning
 * OpenMP threads would compete with ours for the cores and stall every layer under load. */
typedef void (*x86_range_fn)(void *ctx, int64_t lo, int64_t hi, int worker);
void x86_parallel_ranges(int threads, int64_t n, int64_t grain, x86_range_fn fn, void *ctx);
/* the pool as function pointers, for the op modules built apart from _x86 (family.h): one pool per
 * process, however many modules use it */
typedef struct x86_pool_api {
    void (*parallel)(int threads, int64_t n, x86_task_fn fn, void *ctx);
    void (*ranges)(int threads, int64_t n, int64_t grain, x86_range_fn fn, void *ctx);
} x86_pool_api;
extern const x86_pool_api x86_pool_functions;

/* op_threadpool.c: whether an OpenMP parallel region may start. libgomp keeps its team threads across
 * regions and has no fork handler: in a child forked after a region ran on several threads, the next
 * region waits forever for threads the child does not have. A fork handler (op_threadpool.c) clears
 * the flag in such a child, whose OpenMP loops then run on the calling thread; the claim-based pool
 * above starts new workers instead. X86_OMP(cond) is the condition of every OpenMP region. */
extern volatile int x86_omp_usable, x86_omp_started;
/* op_threadpool.c: whether the pool's workers have lately been starved of cores (its header comment): jobs
 * then run on the caller alone, and so does every OpenMP region, whose end waits for all its threads */
int x86_pool_starved(void);
static inline int x86_omp_ok(void) {
    if (!x86_omp_usable || x86_pool_starved()) return 0;
    x86_omp_started = 1;
    return 1;
}
#define X86_OMP(cond) ((cond) && x86_omp_ok())

/* dispatch.c */
int x86_isa_compiled(const char *isa);  /* built into this binary */
int x86_cpu_supports(const char *isa);  /* and runnable on this CPU */
const x86_kernels *x86_kernels_for(const char *isa); /* NULL unless both */
int x86_avx512_rows(void);            /* the AVX-512 fp32 GEMM tile's rows in use: 6, 14 or 8 */
int x86_set_avx512_rows(int rows);    /* 6, 14, 8, or 0 (by the FMA probe); nonzero: not one of those */
double x86_fma512_cost_ratio(void);   /* time of 512-bit FMAs over 256-bit ones at full throughput, about
                                         1 or 2, measured at each call (isa_avx512.c); 0 without AVX-512
                                         or off x86-64 */
const x86_kernels *x86_kernels_tile(const char *isa, int rows); /* avx512: the 6-, 14- or 8-row table */

#ifdef __cplusplus
}
#endif
#endif
