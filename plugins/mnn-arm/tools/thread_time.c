/* Wall-clock of mnn-arm's threaded op layer (csrc/threads.c) on single layers, fp32 path: each layer's
 * state filled as _arm.pyx fills it for Session(threads=T) (scratch for T threads, output columns cut
 * into at least T chunks), run at 1..T threads; every run's output compared bit for bit with one
 * thread's. Built and run by tools/thread_time.sh; under qemu-user the guest threads are host threads,
 * so the times show the split and the serial parts left, not a phone's cores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>

#include "ops.h"

static uint32_t rng = 777;
static float next_float(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) % 2001) / 1000.0f - 1.0f;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int64_t split_cols(int64_t chunk, int64_t cols, int64_t nr, int64_t threads) { /* _arm.pyx's _split_cols */
    const int64_t want = ((cols + threads - 1) / threads + nr - 1) / nr * nr;
    return threads > 1 && want >= nr && want < chunk ? want : chunk;
}

static mnn_tensor tensor(void *data) {
    mnn_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    return t;
}

static int max_threads, reps;

static void conv_layer(const char *name, long C, long H, long O, long k, long s, long group, int wino) {
    arm_conv_state st;
    memset(&st, 0, sizeof st);
    st.k = arm_fkernels_for(ARM_PATH_FP32);
    arm_conv_geom *g = &st.g;
    st.depthwise = group == C && O == C;
    g->C = st.depthwise ? C : C / group;
    g->H = g->W = H, g->kh = g->kw = k, g->sh = g->sw = s, g->dh = g->dw = 1, g->pt = g->pl = k / 2;
    g->OH = g->OW = (H + 2 * (k / 2) - k) / s + 1;
    st.N = 1, st.O = O, st.group = group, st.og = O / group, st.bias_input = -1, st.slices = max_threads;
    st.epi.alpha = st.epi.beta = 1.0f, st.epi.act = MNN_ACT_RELU;
    const long Kg = g->C * k * k;
    float *w = malloc(O * Kg * sizeof(float)), *bias = malloc(O * sizeof(float));
    for (long i = 0; i < O * Kg; ++i) w[i] = next_float() * 0.2f;
    for (long i = 0; i < O; ++i) bias[i] = next_float();
    st.bias = bias;
    if (wino) {
        float *tmp = malloc(16 * O * C * sizeof(float));
        st.winograd = 1;
        st.w = malloc(arm_wino_weight_elems(st.k, O, C) * sizeof(float));
        arm_wino_pack_weights(st.k, w, O, C, (float *)st.w, tmp);
        free(tmp);
        st.chunk_cols = split_cols(arm_wino_chunk_tiles(st.k, g), ((g->OH + 1) / 2) * ((g->OW + 1) / 2), st.k->nr,
                                   max_threads);
        st.work = malloc(arm_wino_work_bytes_mt(st.k, g, O, st.chunk_cols, max_threads));
    } else if (st.depthwise) {
        st.w = w;
        st.work_bytes = (arm_depthwise_work_bytes(g) + 63) / 64 * 64;
        st.work = malloc(st.work_bytes * max_threads);
    } else {
        const int64_t stride = arm_packed_a_elems(st.k->mr, st.og, Kg) * 4;
        st.w_group_bytes = stride;
        st.w = malloc(stride * group);
        for (long gi = 0; gi < group; ++gi)
            st.k->pack_a(w + gi * st.og * Kg, Kg, 1, st.og, Kg, (char *)st.w + gi * stride);
        st.chunk_cols = split_cols(arm_conv_chunk_cols(st.k, g), g->OH * g->OW, st.k->nr, max_threads);
        st.work_bytes = (st.chunk_cols * Kg * 4 + 63) / 64 * 64;
        st.work = malloc(st.work_bytes * max_threads);
    }
    const long nx = C * H * H, ny = O * g->OH * g->OW;
    float *x = malloc(nx * 4), *y1 = malloc(ny * 4), *y = malloc(ny * 4);
    for (long i = 0; i < nx; ++i) x[i] = next_float();
    mnn_tensor in = tensor(x), out1 = tensor(y1), out = tensor(y);
    printf("| %s | %.1f |", name, (double)O * g->OH * g->OW * (st.depthwise ? k * k : Kg) / 1e6);
    double t1 = 0;
    int same = 1;
    for (int t = 1; t <= max_threads; t *= 2) {
        st.op.threads = t;
        double best = 1e30;
        for (int r = 0; r < reps; ++r) {
            const double t0 = now();
            arm_conv_run(&st, &in, 1, t == 1 ? &out1 : &out, 1);
            const double dt = now() - t0;
            best = dt < best ? dt : best;
        }
        if (t == 1) t1 = best;
        else same &= memcmp(y, y1, ny * 4) == 0;
        printf(" %.1f (%.2fx) |", best * 1e3, t1 / best);
    }
    printf(" %s |\n", same ? "yes" : "NO");
    fflush(stdout);
    free(x), free(y), free(y1), free(w), free(bias), free(st.work);
    if (!st.depthwise) free(st.w);
}

/* CPU seconds each thread of this process has run (/proc/self/task/<tid>/stat, utime + stime): the
 * pool's workers carry their share of the work even where a loaded host gives them no second core */
static void thread_cpu(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    const double tick = 100.0; /* USER_HZ */
    printf("\nCPU time per thread of this process (s):");
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        const size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')'); /* fields after the command name: state is field 3 */
        unsigned long ut = 0, st = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            printf(" %.2f", (ut + st) / tick);
    }
    printf("\n");
    closedir(d);
}

int main(int argc, char **argv) {
    max_threads = argc > 1 ? atoi(argv[1]) : 4;
    reps = argc > 2 ? atoi(argv[2]) : 3;
    printf("| layer (fp32, relu) | MMACs |");
    for (int t = 1; t <= max_threads; t *= 2) printf(" %d thread%s ms |", t, t > 1 ? "s" : "");
    printf(" same bits |\n|---|---|");
    for (int t = 1; t <= max_threads; t *= 2) printf("---|");
    printf("---|\n");
    conv_layer("3x3 64->64 56x56 (Winograd)", 64, 56, 64, 3, 1, 1, 1);
    conv_layer("3x3 128->128 28x28 (Winograd)", 128, 28, 128, 3, 1, 1, 1);
    conv_layer("3x3 s2 64->128 56x56 (im2col)", 64, 56, 128, 3, 2, 1, 0);
    conv_layer("1x1 144->24 56x56 (GEMM)", 144, 56, 24, 1, 1, 1, 0);
    conv_layer("1x1 96->576 14x14 (GEMM)", 96, 14, 576, 1, 1, 1, 0);
    conv_layer("1x1 320->1280 7x7 (GEMM)", 320, 7, 1280, 1, 1, 1, 0);
    conv_layer("dw 3x3 144 56x56", 144, 56, 144, 3, 1, 144, 0);
    conv_layer("dw 3x3 s2 96 112x112", 96, 112, 96, 3, 2, 96, 0);
    thread_cpu();
    return 0;
}
