/* Run-time ISA dispatch: which kernel tables this binary has, and which of
 * them this CPU can run (cpuid through __builtin_cpu_supports). Compiled
 * with baseline flags only, so it runs anywhere. */
#include <string.h>

#include "x86.h"

extern const x86_kernels x86_kernels_scalar;
#if defined(__x86_64__) || defined(__i386__)
#define MNN_X86_HAVE_SIMD 1
extern const x86_kernels x86_kernels_avx2;
extern const x86_kernels x86_kernels_avx512;
extern const x86_kernels x86_kernels_avx512_t14;
extern const x86_kernels x86_kernels_avx512_t8;
#endif
#if defined(__x86_64__)
double x86_avx512_fma_probe(void); /* isa_avx512.c (its assembly names zmm12: x86-64 only) */
#endif

/* The AVX-512 GEMM tile's rows: 6 (isa_avx512.c), 14 (isa_avx512_t14.c) or 8 (isa_avx512_t8.c, an
 * 8x48 tile: chosen per layer, process-wide only when asked); 0 until set or asked.
 * Process-wide, like the ISA's cpuid: packed weights carry the table's name, so both may coexist. */
static int avx512_rows = 0;

int x86_avx512_rows(void) {
#ifdef MNN_X86_HAVE_SIMD
    if (avx512_rows == 0) {
        /* 14 rows where a 512-bit FMA costs what a 256-bit one does (two 512-bit FMA units: Intel's
         * server cores, Zen 5), 6 where it costs two (Zen 4 splits it in halves; one-unit Xeons) */
        double ratio = x86_fma512_cost_ratio();
        avx512_rows = ratio > 0 && ratio < 1.5 ? 14 : 6;
    }
#endif
    return avx512_rows;
}

double x86_fma512_cost_ratio(void) {
#if defined(__x86_64__)
    if (x86_cpu_supports("avx512")) return x86_avx512_fma_probe();
#endif
    return 0.0;
}

int x86_set_avx512_rows(int rows) {
    if (rows != 0 && rows != 6 && rows != 14 && rows != 8) return 1;
    avx512_rows = rows;
    return 0;
}

int x86_isa_compiled(const char *isa) {
    if (strcmp(isa, "scalar") == 0) return 1;
#ifdef MNN_X86_HAVE_SIMD
    if (strcmp(isa, "avx2") == 0 || strcmp(isa, "avx512") == 0) return 1;
#endif
    return 0;
}

int x86_cpu_supports(const char *isa) {
    if (!x86_isa_compiled(isa)) return 0;
    if (strcmp(isa, "scalar") == 0) return 1;
#ifdef MNN_X86_HAVE_SIMD
    __builtin_cpu_init();
    if (strcmp(isa, "avx2") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(isa, "avx512") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("fma");
#endif
    return 0;
}

#ifdef MNN_X86_HAVE_SIMD
/* the AVX-512 table of a tile's rows; any other number: the one in use */
static const x86_kernels *avx512_table(int rows) {
    if (rows != 6 && rows != 8 && rows != 14) rows = x86_avx512_rows();
    return rows == 14 ? &x86_kernels_avx512_t14 : rows == 8 ? &x86_kernels_avx512_t8 : &x86_kernels_avx512;
}
#endif

const x86_kernels *x86_kernels_for(const char *isa) { return x86_kernels_tile(isa, 0); }

const x86_kernels *x86_kernels_tile(const char *isa, int rows) {
    if (!x86_cpu_supports(isa)) return NULL;
    if (strcmp(isa, "scalar") == 0) return &x86_kernels_scalar;
#ifdef MNN_X86_HAVE_SIMD
    if (strcmp(isa, "avx2") == 0) return &x86_kernels_avx2;
    if (strcmp(isa, "avx512") == 0) return avx512_table(rows);
#endif
    (void)rows;
    return NULL;
}

/* A padded scratch plane: PH rows of PW floats (+1 when split into even and
 * odd columns), slack for the last vector, which may read up to 16 lanes *
 * max(stride, 2) floats past the plane's end (those lanes are masked), then
 * the kh*kw tap offsets (int64). Even, so every thread's part is 8-aligned. */
static int64_t scratch_plane_floats(int64_t OH, int64_t OW, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                    int64_t dh, int64_t dw) {
    const int64_t PH = (OH - 1) * sh + (kh - 1) * dh + 1, PW = (OW - 1) * sw + (kw - 1) * dw + 1;
    const int64_t s = sw > 2 ? sw : 2;
    const int64_t plane = (PH * (PW + 1) + 16 * s + 64 + 1) / 2 * 2;
    return plane + 2 * kh * kw;
}

int64_t x86_scratch_offsets_at(int64_t per_thread, int64_t kh, int64_t kw) { return per_thread - 2 * kh * kw; }

int64_t x86_depthwise_work_floats(const x86_conv_geom *g, int vlen) {
    if (x86_dw_channels_last(g, vlen)) return (x86_dw_cl_floats(g) + 15) / 16 * 16; /* cache-line parts */
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    return scratch_plane_floats(g->OH, g->OW, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw) + x86_dw_flat_floats(g->OH, PW);
}

int64_t x86_pool_work_floats(const x86_pool_geom *g) {
    return scratch_plane_floats(g->OH, g->OW, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw);
}

/* The packed im2col chunk of a thread: about 192 KB, so it stays in L2 next
 * to the weights. Weights too big for L2 stream from memory once per chunk,
 * so then chunks are at least 256 columns wide (2/cols bytes per flop). */
#define CONV_CHUNK_BYTES (192 * 1024)
#define CONV_MIN_COLS_BIG_WEIGHTS 256

void x86_conv_plan(const x86_kernels *k, const x86_conv_geom *g, int64_t images, int64_t og, int threads,
                   int64_t *chunk_cols, int32_t *per_item) {
    const int64_t K = g->C * g->kh * g->kw, N = g->OH * g->OW, nr = k->nr;
    const int64_t n_round = (N + nr - 1) / nr * nr;
    const int big_weights = og * K * (int64_t)sizeof(float) > CONV_CHUNK_BYTES;
    int64_t cols = CONV_CHUNK_BYTES / (int64_t)sizeof(float) / (K > 0 ? K : 1);
    if (big_weights && cols < CONV_MIN_COLS_BIG_WEIGHTS) cols = CONV_MIN_COLS_BIG_WEIGHTS;
    if (!big_weights && threads > 1 && images > 0) { /* two chunks or more per thread when the images allow */
        const int64_t per_image = (2 * threads + images - 1) / images;
        const int64_t cap = (N + per_image - 1) / per_image;
        if (cap < cols) cols = cap;
    }
    cols = (cols + nr - 1) / nr * nr;
    if (cols > n_round) cols = n_round;
    if (cols < nr) cols = nr;
    const int64_t items = images * ((N + cols - 1) / cols);
    *chunk_cols = cols;
    *per_item = threads > 1 && (items >= 2 * threads || (items >= threads && og <= 64));
}

/* -- inference (x86infer) -- */

/* Winograd chunks: the 36 transformed inputs and results of a chunk (36 x
 * (C + O) x tiles floats) sized to about L2, at least one register-tile
 * column panel wide. Threads take whole chunks when there are two per thread;
 * else they share each chunk (split over channels, positions, outputs). */
#define WINO_CHUNK_BYTES (512 * 1024)
#define WINO_T_MAX_TILES 64
#define WINO_T_MIN_CHANNELS 64
#define WINO_SPLIT_MIN_TILES 24 /* tiles a thread, for a one-chunk plane to be cut into a chunk per thread */

/* floats of one chunk of t tiles (a multiple of NR): the gather, the 36 V and the 36 M (wino_chunk_floats) */
static int64_t wino_per_chunk(int64_t t, int64_t C, int64_t O) { return 36 * t + 36 * t * C + 36 * O * t; }

/* floats of gemm_t's V^T buffers, one per worker (winograd_impl.h: vt_floats): a chunk's tcp tiles
 * rounded up to MR rows, C columns */
static int64_t wino_vt_floats(const x86_kernels *k, int64_t tcp, int64_t C, int threads) {
    return (threads > 1 ? threads : 1) * ((tcp + k->mr - 1) / k->mr * k->mr) * C;
}

/* An NC16 side: always the tiles as the GEMM's rows (gemm_t), whose transforms run along the channels
 * (winograd_impl.h: wino_input_nc16, wino_output_t). Where the 36 transformed weights stay in L2
 * (WINO_NC16_RESIDENT_BYTES) each chunk reading them again costs little, so the chunks are sized to
 * about WINO_CHUNK_BYTES and as many as a multiple of the threads, of nearly equal tiles, each taken
 * whole by one thread (a plane too small for WINO_SPLIT_MIN_TILES tiles a thread is one chunk the
 * threads share). SqueezeNet's 27x27 layers (49 tiles, 32 -> 128) ran 0.160 instead of 0.225 ms at one
 * thread so. Bigger weights keep the usual plan's chunks (at least NR tiles, one chunk up to 64):
 * ResNet-18's 14x14 layers (256 -> 256: 9.4 MB) in chunks of 6 tiles took 1.30 instead of 0.78 ms. */
#define WINO_NC16_RESIDENT_BYTES (1024 * 1024)

static void wino_plan_nc16(const x86_kernels *k, int64_t T, int64_t C, int64_t O, int threads, int64_t *tc,
                           int32_t *per_chunk, int64_t *work_floats) {
    int64_t t = WINO_CHUNK_BYTES / (36 * (C + O) * (int64_t)sizeof(float)), chunks;
    if (t < 1) t = 1;
    chunks = (T + t - 1) / t;
    *per_chunk = 0;
    if (threads > 1 && (chunks > 1 || T >= WINO_SPLIT_MIN_TILES * threads)) {
        chunks = (chunks + threads - 1) / threads * threads;
        *per_chunk = 1;
    }
    t = (T + chunks - 1) / chunks;
    const int64_t tcp = (t + k->nr - 1) / k->nr * k->nr;
    *tc = t;
    *work_floats = x86_wino_chunk_floats(wino_per_chunk(tcp, C, O), tcp, threads, *per_chunk) +
                   wino_vt_floats(k, tcp, C, threads);
}

void x86_wino_plan(const x86_kernels *k, int64_t N, int64_t C, int64_t O, int64_t OH, int64_t OW, int threads, int nc16,
                   int64_t *tc, int32_t *per_chunk, int32_t *gemm_t, int64_t *work_floats) {
    /* the tiles of all N images are one sequence: at batch 8 a 14x14 output's 16 tiles become 128 */
    const int64_t nr = k->nr, T = N * ((OH + 3) / 4) * ((OW + 3) / 4), t_round = (T + nr - 1) / nr * nr;
    if (nc16 && 36 * C * O * (int64_t)sizeof(float) <= WINO_NC16_RESIDENT_BYTES) {
        *gemm_t = 1;
        wino_plan_nc16(k, T, C, O, threads, tc, per_chunk, work_floats);
        return;
    }
    int64_t t = WINO_CHUNK_BYTES / (36 * (C + O) * (int64_t)sizeof(float)) / nr * nr;
    if (t < nr) t = nr;
    if (t > t_round) t = t_round;
    const int64_t chunks = (T + t - 1) / t;
    const int64_t per = wino_per_chunk(t, C, O);
    *tc = t;
    *per_chunk = threads > 1 && chunks >= 2 * threads;
    *work_floats = x86_wino_chunk_floats(per, t, threads, *per_chunk);
    /* All tiles in one vector (13x13 and 14x14 outputs: 16 tiles on AVX-512): with the tiles as
     * the GEMM's columns a tile of the micro-kernel is one vector wide and does one broadcast
     * per FMA, half its speed (gemm_impl.h); as its rows (M^T = V^T U^T) it does two FMAs per
     * broadcast. Each thread then packs V^T into its own A operand: wino_gemm_t. */
    *gemm_t = nc16 || (k->vlen > 1 && T <= k->vlen);
    /* Up to WINO_T_MAX_TILES tiles (27x27 and 28x28 outputs: 49) in one chunk, the tiles as rows fill
     * whole MR-row panels better than NR-column ones (49 tiles: 56 rows against 64 columns). That
     * saves GEMM work, in proportion to C; the transposed output transform stores 4 floats at a
     * time instead of whole vectors, so with few channels in it lost: measured on 27x27 32->128
     * (SqueezeNet, in the model) it ran 10-20 % slower, on 28x28 128->128 (ResNet-18) 7 % faster. */
    const int64_t mr = k->mr, rows_padded = (T + mr - 1) / mr * mr;
    if (k->vlen > 1 && T <= WINO_T_MAX_TILES && rows_padded < t_round && C >= WINO_T_MIN_CHANNELS) {
        *gemm_t = 1;
        t = t_round; /* one chunk */
        *tc = t;
        *per_chunk = 0;
        *work_floats = x86_wino_chunk_floats(wino_per_chunk(t, C, O), t, threads, 0);
    }
    /* All tiles in one chunk, at two threads and more: a chunk per thread, each taken whole (its
     * transforms and its 36 GEMMs on one core), when each thread gets WINO_SPLIT_MIN_TILES tiles or more.
     * Shared, the input transform is cut by channels and the GEMMs by position, so each phase reads
     * what the other core wrote, and the threads meet three times. Two threads, in the models:
     * ResNet-18's 28x28 layers (49 tiles, 128 -> 128) 0.43-0.46 -> 0.39-0.42 ms, SqueezeNet's 27x27
     * ones (49 tiles, 32 -> 128) 0.150 -> 0.131 ms; 16 tiles (13x13, 14x14) were slower split (0.165 ->
     * 0.190 ms), too few rows for a thread's GEMMs. */
    if (threads > 1 && T <= t && T >= WINO_SPLIT_MIN_TILES * threads) {
        const int64_t tt = (T + threads - 1) / threads, tcp = (tt + nr - 1) / nr * nr;
        *tc = tt;
        *per_chunk = 1;
        t = tcp;
        *work_floats = x86_wino_chunk_floats(wino_per_chunk(tcp, C, O), tcp, threads, 1);
    }
    if (*gemm_t) *work_floats += wino_vt_floats(k, t, C, threads);
}
