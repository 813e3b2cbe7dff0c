/* The subject of tools/count_insns.py: runs MobileNetV2's convolution layers
 * through the op layer's run functions (csrc/ops.c), with states filled the
 * way mnn_arm/_arm.pyx fills them at prepare, one path at a time.
 *
 *   count_layers PATH < layers     (PATH: fp32 | fp32_im2col | fp32_winograd | fp16 | fp16h | int8 | int8_dot)
 *   each stdin line: C H W O k stride pad group
 *
 * fp32 takes Winograd F(2x2, 3x3) where Session's "auto" rule does (ops_conv.py: 3x3 stride 1, one
 * group, at least WINO_MIN_CHANNELS in and out, WINO_MIN_SIDE output rows and columns); fp32_im2col
 * never does (option arm.winograd off: im2col + GEMM, as before); fp32_winograd takes it wherever it
 * applies (on). fp16 and fp16h take the fp16 Winograd (winograd_fp16.c) by the same auto rule.
 *
 * Only what one inference executes lies between count_begin() and
 * count_end() (the counter adds up the translation blocks qemu logs between
 * the two); weight packing and buffer set-up happen before. Float layers use
 * the fused activations of MobileNetV2 (ReLU6 = Clip(0, 6) after the stem,
 * the expansions and the depthwise layers, none after the projections);
 * int8 layers are QLinearConv uint8 -> uint8 with int8 weights and one
 * multiplier per output channel. fp16h: the fp16 kernels on fp16 activations
 * (precision="low": tensors stay fp16 between ops); the network's input
 * enters the fp16 domain at the stem (C == 3), so its conversion from fp32 is
 * counted with that layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

__attribute__((noinline)) void count_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void count_end(void) { __asm__ volatile("" ::: "memory"); }

static uint32_t rng = 12345;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static float next_float(void) { return (float)(next_u32() % 2001) / 1000.0f - 1.0f; }

/* one group's geometry, except for depthwise (ops_conv.py: C is then every channel) */
static void geometry(arm_conv_geom *g, long C, long H, long W, long k, long s, long p, long group, int depthwise) {
    memset(g, 0, sizeof *g);
    g->C = depthwise ? C : C / group;
    g->H = H, g->W = W, g->kh = g->kw = k, g->sh = g->sw = s, g->dh = g->dw = 1, g->pt = g->pl = p;
    g->OH = (H + 2 * p - k) / s + 1;
    g->OW = (W + 2 * p - k) / s + 1;
}

static mnn_tensor tensor(void *data) {
    mnn_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    return t;
}

/* ops_conv.py's WINO_MIN_CHANNELS and WINO_MIN_SIDE */
#define WINO_MIN_CHANNELS 4
#define WINO_MIN_SIDE 3

static void float_layer(int path, int wino_mode, long C, long H, long W, long O, long k, long s, long p, long group) {
    arm_conv_state st;
    memset(&st, 0, sizeof st);
    st.k = arm_fkernels_for(path);
    arm_conv_geom *g = &st.g;
    st.depthwise = group == C && O == C;
    geometry(g, C, H, W, k, s, p, group, st.depthwise);
    st.N = 1, st.O = O, st.group = group, st.og = O / group;
    st.bias_input = -1;
    const int relu6 = !(k == 1 && O < C); /* the projections are linear */
    st.epi.alpha = st.epi.beta = 1.0f;
    st.epi.act = relu6 ? MNN_ACT_CLIP : MNN_ACT_NONE;
    st.epi.act_alpha = 0.0f, st.epi.act_beta = 6.0f;
    float *bias = malloc(O * sizeof(float));
    for (long i = 0; i < O; ++i) bias[i] = next_float();
    st.bias = bias;
    const long Kg = g->C * k * k;
    float *w = malloc(O * Kg * sizeof(float));
    for (long i = 0; i < O * Kg; ++i) w[i] = next_float() * 0.5f;
    /* wino_mode 0 off, 1 auto, 2 on */
    const int wino = wino_mode && group == 1 && !st.depthwise && arm_wino_applies(g) &&
                     (wino_mode == 2 || (C >= WINO_MIN_CHANNELS && O >= WINO_MIN_CHANNELS && g->OH >= WINO_MIN_SIDE &&
                                         g->OW >= WINO_MIN_SIDE));
    st.winograd = wino ? (path == ARM_PATH_FP32 ? 1 : 2) : 0;
    if (st.winograd == 2) { /* the fp16 paths' (winograd_fp16.c), as _arm.pyx */
        void *tmp = malloc(16 * O * C * 2);
        st.w = malloc(arm_wino_h_weight_bytes(g, O));
        arm_wino_h_pack_weights(g, w, O, st.w, tmp);
        free(tmp);
        st.chunk_cols = arm_wino_h_chunk_tiles(g);
        st.work = malloc(arm_wino_h_work_bytes_mt(g, O, st.chunk_cols, 1));
    } else if (st.winograd) { /* as _arm.pyx: transformed and packed once (not counted) */
        float *tmp = malloc(16 * O * C * sizeof(float));
        st.w = malloc(arm_wino_weight_elems(st.k, O, C) * sizeof(float));
        arm_wino_pack_weights(st.k, w, O, C, (float *)st.w, tmp);
        free(tmp);
        st.chunk_cols = arm_wino_chunk_tiles(st.k, g);
        st.work = malloc(arm_wino_work_bytes(st.k, g, O, st.chunk_cols));
    } else if (st.depthwise) {
        st.w = w; /* depthwise weights stay [C][kh*kw] fp32, as _arm.pyx hands them over */
        st.work = malloc(arm_depthwise_work_bytes(g));
    } else {
        const int64_t stride = arm_packed_a_elems(st.k->mr, st.og, Kg) * st.k->elem_bytes, eb = st.k->io_bytes;
        st.w_group_bytes = stride;
        st.w = malloc(stride * group);
        void *wio = w;
        if (eb == 2) { /* fp16h packs weights from fp16 (_arm.pyx converts them first) */
            wio = malloc(O * Kg * 2);
            arm_f32_to_f16(w, wio, O * Kg);
        }
        for (long gi = 0; gi < group; ++gi)
            st.k->pack_a((char *)wio + gi * st.og * Kg * eb, Kg, 1, st.og, Kg, (char *)st.w + gi * stride);
        if (wio != w) free(wio);
        st.chunk_cols = arm_conv_chunk_cols(st.k, g);
        st.work = malloc(st.chunk_cols * (Kg > 1 ? Kg : 1) * st.k->elem_bytes);
    }
    const int half = st.k->io_bytes == 2, enters = half && C == 3;
    float *x32 = malloc(C * H * W * sizeof(float));
    void *x = malloc(C * H * W * st.k->io_bytes), *y = malloc(O * g->OH * g->OW * st.k->io_bytes);
    for (long i = 0; i < C * H * W; ++i) x32[i] = next_float();
    if (half) arm_f32_to_f16(x32, x, C * H * W);
    else memcpy(x, x32, C * H * W * sizeof(float));
    mnn_tensor in = tensor(x), out = tensor(y);
    count_begin();
    if (enters) arm_f32_to_f16(x32, x, C * H * W);
    arm_conv_run(&st, &in, 1, &out, 1);
    count_end();
    free(x32), free(x), free(y), free(w), free(bias), free(st.work);
    if (!st.depthwise) free((void *)st.w);
}

static void int8_layer(int path, long C, long H, long W, long O, long k, long s, long p, long group) {
    arm_qconv_state st;
    memset(&st, 0, sizeof st);
    st.k = arm_qkernels_for(path);
    arm_conv_geom *g = &st.g;
    st.depthwise = group == C && O == C;
    geometry(g, C, H, W, k, s, p, group, st.depthwise);
    st.N = 1, st.O = O, st.group = group, st.og = O / group;
    st.is_uint8 = 1, st.zx = 118, st.out_bytes = 1, st.bias_input = -1;
    const long Kg = g->C * k * k, K4 = arm_k4(Kg);
    int8_t *w = malloc(O * Kg);
    for (long i = 0; i < O * Kg; ++i) w[i] = (int8_t)(next_u32() % 255 - 127);
    int32_t *da = malloc(O * 4), db = 128 - st.zx, *bias = malloc(O * 4);
    double *mult = malloc(O * 8);
    for (long i = 0; i < O; ++i) {
        da[i] = 0; /* symmetric int8 weights: zw = 0 */
        bias[i] = (int32_t)(next_u32() % 2001) - 1000;
        /* float32(float32(sx * sw) / sy), as mnn_core/ops/quant.py forms it */
        const float sx = 0.02f, sw = 0.001f * (float)(5 + next_u32() % 26), sy = 0.4f;
        mult[i] = (double)((float)(sx * sw) / sy);
    }
    st.epi.K = Kg, st.epi.da = da, st.epi.da_rs = 1, st.epi.db = &db, st.epi.db_cs = 0;
    st.epi.out_kind = 1, st.epi.mult = mult, st.epi.mult_rs = 1, st.epi.zy = 3.0, st.epi.bias = bias;
    int16_t *w16 = NULL;
    int32_t *rowsum = NULL;
    if (st.depthwise) {
        w16 = malloc(O * Kg * 2);
        for (long i = 0; i < O * Kg; ++i) w16[i] = w[i];
        st.w16 = w16;
        st.dwork = malloc(arm_q_depthwise_work_elems(g) * 2);
        st.acc = malloc(C * g->OH * g->OW * 4);
    } else {
        const int64_t stride = (st.og + ARM_Q_MR - 1) / ARM_Q_MR * ARM_Q_MR * K4;
        st.w_group_bytes = stride;
        st.w = malloc(stride * group);
        rowsum = malloc(O * 4);
        st.epi.rowsum = rowsum;
        for (long gi = 0; gi < group; ++gi)
            arm_q_pack_a(w + gi * st.og * Kg, 0, Kg, 1, st.og, Kg, (int8_t *)st.w + gi * stride, rowsum + gi * st.og);
        st.chunk_cols = arm_qconv_chunk_cols(g);
        st.bwork = malloc(st.chunk_cols * K4);
        st.colsum = malloc(st.chunk_cols * 4);
        st.acc = malloc(st.og * st.chunk_cols * 4);
    }
    uint8_t *x = malloc(C * H * W), *y = malloc(O * g->OH * g->OW);
    for (long i = 0; i < C * H * W; ++i) x[i] = (uint8_t)next_u32();
    mnn_tensor in = tensor(x), out = tensor(y);
    count_begin();
    arm_qconv_run(&st, &in, 1, &out, 1);
    count_end();
    free(x), free(y), free(w), free(da), free(bias), free(mult), free(w16), free(rowsum), free((void *)st.w);
    free(st.dwork), free(st.acc), free(st.bwork), free(st.colsum);
}

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "fp32";
    const int wino_mode = !strcmp(name, "fp32_im2col") ? 0 : (!strcmp(name, "fp32_winograd") ? 2 : 1);
    if (wino_mode != 1) name = "fp32";
    int path = -1;
    for (int i = 0; i <= ARM_PATH_FP16H; ++i)
        if (strcmp(name, arm_path_name(i)) == 0) path = i;
    if (path < 0 || !arm_path_runnable(path)) {
        fprintf(stderr, "count_layers: path %s unknown or not runnable on this CPU\n", name);
        return 2;
    }
    long C, H, W, O, k, s, p, group;
    while (scanf("%ld %ld %ld %ld %ld %ld %ld %ld", &C, &H, &W, &O, &k, &s, &p, &group) == 8) {
        if (path == ARM_PATH_FP32 || path == ARM_PATH_FP16 || path == ARM_PATH_FP16H)
            float_layer(path, wino_mode, C, H, W, O, k, s, p, group);
        else int8_layer(path, C, H, W, O, k, s, p, group);
    }
    return 0;
}
