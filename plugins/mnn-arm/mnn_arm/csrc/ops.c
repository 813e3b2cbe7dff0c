/* Run functions of the op layer (see ops.h): called by the core's run loop without the GIL. */
#include <string.h>

#include "ops.h"

const char *arm_op_error(void *state) { return ((arm_op *)state)->error; }

int arm_conv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_conv_state *s = (arm_conv_state *)state;
    (void)n_out;
    const char *x = (const char *)arm_data(&ins[0]);
    char *y = (char *)arm_data(&outs[0]);
    const int64_t eb = s->k->io_bytes;
    const float *bias = s->bias_input >= 0 && s->bias_input < n_in ? (const float *)arm_data(&ins[s->bias_input]) : s->bias;
    const arm_conv_geom *g = &s->g;
    if (s->depthwise) {
        s->k->depthwise(x, (const float *)s->w, bias, y, s->N * g->C, g, &s->epi, s->work);
        return 0;
    }
    arm_epilogue e = s->epi;
    if (s->winograd) {
        e.bias = bias;
        e.bias_rs = 1;
        e.bias_cs = 0;
        for (int64_t n = 0; n < s->N; ++n)
            arm_wino_conv(s->k, g, s->O, (const float *)s->w, (const float *)(x + n * g->C * g->H * g->W * eb),
                          (float *)(y + n * s->O * g->OH * g->OW * eb), &e, s->chunk_cols, s->work);
        return 0;
    }
    for (int64_t n = 0; n < s->N; ++n)
        for (int64_t gi = 0; gi < s->group; ++gi) {
            e.bias = bias ? bias + gi * s->og : NULL;
            e.bias_rs = 1;
            e.bias_cs = 0;
            arm_conv_gemm(s->k, g, s->og, (const char *)s->w + gi * s->w_group_bytes,
                          x + (n * s->group + gi) * g->C * g->H * g->W * eb,
                          y + (n * s->O + gi * s->og) * g->OH * g->OW * eb,
                          &e, s->chunk_cols, s->work);
        }
    return 0;
}

int arm_matmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_matmul_state *s = (arm_matmul_state *)state;
    (void)n_out;
    const char *a = (const char *)arm_data(&ins[0]);
    char *y = (char *)arm_data(&outs[0]);
    const int64_t eb = s->k->io_bytes;
    arm_epilogue e = s->epi;
    if (s->bias_input >= 0 && s->bias_input < n_in) e.bias = (const float *)arm_data(&ins[s->bias_input]);
    const void *bp = s->b_packed;
    if (bp == NULL) {
        s->k->pack_b(arm_data(&ins[1]), s->b_rs, s->b_cs, s->K, s->N, s->b_work);
        bp = s->b_work;
    }
    for (int64_t t = 0; t < s->batch; ++t) {
        s->k->pack_a(a + t * s->M * s->K * eb, s->a_rs, s->a_cs, s->M, s->K, s->a_work);
        s->k->gemm(s->M, s->N, s->K, s->a_work, bp, y + t * s->M * s->N * eb, s->N, &e);
    }
    return 0;
}

int arm_binary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_binary_state *s = (arm_binary_state *)state;
    (void)n_in, (void)n_out;
    if (s->half)
        arm_binary_h(s->binop, arm_data(&ins[0]), arm_data(&ins[1]), arm_data(&outs[0]), s->ndim, s->dims, s->sa,
                     s->sb);
    else
        arm_binary(s->binop, (const float *)arm_data(&ins[0]), (const float *)arm_data(&ins[1]),
                   (float *)arm_data(&outs[0]), s->ndim, s->dims, s->sa, s->sb);
    return 0;
}

int arm_unary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_unary_state *s = (arm_unary_state *)state;
    (void)n_in, (void)n_out;
    if (s->half) arm_activation_h(&s->epi, arm_data(&ins[0]), arm_data(&outs[0]), mnn_tensor_numel(&ins[0]));
    else arm_activation(&s->epi, (const float *)arm_data(&ins[0]), (float *)arm_data(&outs[0]), mnn_tensor_numel(&ins[0]));
    return 0;
}

int arm_affine_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_affine_state *s = (arm_affine_state *)state;
    (void)n_in, (void)n_out;
    arm_channel_affine((const float *)arm_data(&ins[0]), s->scale, s->shift, (float *)arm_data(&outs[0]), s->outer, s->C,
                       s->inner);
    return 0;
}

int arm_norm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_norm_state *s = (arm_norm_state *)state;
    (void)n_out;
    const float *scale = s->scale_input >= 0 && s->scale_input < n_in ? (const float *)arm_data(&ins[s->scale_input]) : s->scale;
    const float *shift = s->shift_input >= 0 && s->shift_input < n_in ? (const float *)arm_data(&ins[s->shift_input]) : s->shift;
    arm_normalize_rows((const float *)arm_data(&ins[0]), (float *)arm_data(&outs[0]), s->rows, s->n, s->eps, scale, shift,
                       s->per_row);
    return 0;
}

int arm_reduce_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_reduce_state *s = (arm_reduce_state *)state;
    (void)n_in, (void)n_out;
    arm_reduce_rows((const float *)arm_data(&ins[0]), (float *)arm_data(&outs[0]), s->rows, s->n, s->kind);
    return 0;
}

int arm_softmax_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_softmax_state *s = (arm_softmax_state *)state;
    (void)n_in, (void)n_out;
    arm_softmax((const float *)arm_data(&ins[0]), (float *)arm_data(&outs[0]), s->outer, s->axis, s->inner, s->log);
    return 0;
}

int arm_pool_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_pool_state *s = (arm_pool_state *)state;
    (void)n_in, (void)n_out;
    arm_pool((const float *)arm_data(&ins[0]), (float *)arm_data(&outs[0]), s->planes, &s->g, s->work);
    return 0;
}

int arm_concat_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_concat_state *s = (arm_concat_state *)state;
    (void)n_out;
    char *y = (char *)arm_data(&outs[0]);
    for (int64_t o = 0; o < s->outer; ++o)
        for (int32_t i = 0; i < s->n && i < n_in; ++i) {
            const size_t bytes = (size_t)(s->block[i] * s->elem);
            if (bytes) memcpy(y, (const char *)arm_data(&ins[i]) + o * bytes, bytes);
            y += bytes;
        }
    return 0;
}

int arm_qconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_qconv_state *s = (arm_qconv_state *)state;
    (void)n_out;
    const arm_conv_geom *g = &s->g;
    const int64_t npix = g->OH * g->OW, in_plane = g->H * g->W;
    const char *x = (const char *)arm_data(&ins[0]);
    char *y = (char *)arm_data(&outs[0]);
    arm_qepilogue e = s->epi;
    if (s->bias_input >= 0 && s->bias_input < n_in) e.bias = (const int32_t *)arm_data(&ins[s->bias_input]);
    if (s->depthwise) {
        for (int64_t n = 0; n < s->N; ++n) {
            s->k->depthwise(x + n * g->C * in_plane, s->is_uint8, s->zx, s->w16, e.bias, s->acc, g->C, g, s->dwork);
            for (int64_t c = 0; c < g->C; ++c) {
                arm_qepilogue ec = e; /* the depthwise sums are exact (x - zx, w - zw): nothing to undo */
                ec.K = 0;
                ec.rowsum = ec.colsum = NULL;
                ec.bias = NULL;
                ec.mult = e.mult + c * e.mult_rs;
                ec.mult_rs = 0;
                arm_q_finish(s->acc + c * npix, npix, y + (n * g->C + c) * npix * s->out_bytes, npix, 0, 0, 1, npix,
                             &ec);
            }
        }
        return 0;
    }
    for (int64_t n = 0; n < s->N; ++n)
        for (int64_t gi = 0; gi < s->group; ++gi) {
            arm_qepilogue eg = e;
            eg.da = e.da + gi * s->og * e.da_rs;
            eg.rowsum = e.rowsum + gi * s->og;
            eg.bias = e.bias ? e.bias + gi * s->og : NULL;
            eg.mult = e.mult + gi * s->og * e.mult_rs;
            arm_qconv_gemm(s->k, g, s->og, s->w + gi * s->w_group_bytes, x + (n * s->group + gi) * g->C * in_plane,
                           s->is_uint8, s->zx, y + (n * s->O + gi * s->og) * npix * s->out_bytes, s->out_bytes, &eg,
                           s->chunk_cols, s->bwork, s->colsum, s->acc);
        }
    return 0;
}

int arm_qmatmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_qmatmul_state *s = (arm_qmatmul_state *)state;
    (void)n_in, (void)n_out;
    const char *a = (const char *)arm_data(&ins[0]);
    char *y = (char *)arm_data(&outs[0]);
    arm_qepilogue e = s->epi;
    e.rowsum = s->rowsum;
    const int64_t batch = s->M ? mnn_tensor_numel(&ins[0]) / (s->M * s->K > 0 ? s->M * s->K : 1) : 0;
    for (int64_t t = 0; t < batch; ++t) {
        arm_q_pack_a(a + t * s->M * s->K, s->a_uint8, s->K, 1, s->M, s->K, s->ap, s->rowsum);
        s->k->gemm(s->M, s->N, arm_k4(s->K), s->ap, s->bp, s->acc, s->N);
        arm_q_finish(s->acc, s->N, y + t * s->M * s->N * s->out_bytes, s->N, 0, 0, s->M, s->N, &e);
    }
    return 0;
}

/* An fp32 op in the fp16 domain: its fp16 tensors widened into fp32 buffers, the op run, its fp16
 * outputs narrowed back. For the ops with no fp16 kernel (norms, softmax, pooling); the hot ones
 * (convolution, GEMM, element-wise) read and write fp16 themselves. */
int arm_widen_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_widen_state *s = (arm_widen_state *)state;
    mnn_tensor tin[ARM_WIDEN_MAX_IN], tout[ARM_WIDEN_MAX_OUT];
    if (n_in > ARM_WIDEN_MAX_IN || n_out > ARM_WIDEN_MAX_OUT || n_in > s->n_in || n_out > s->n_out) {
        s->op.error = "arm: a widened fp16-domain op was called with more tensors than it was prepared for";
        return 1;
    }
    for (int32_t i = 0; i < n_in; ++i) {
        tin[i] = ins[i];
        if (s->in_buf[i]) {
            arm_f16_to_f32(arm_data(&ins[i]), s->in_buf[i], mnn_tensor_numel(&ins[i]));
            tin[i].data = s->in_buf[i];
            tin[i].byte_offset = 0;
        }
    }
    for (int32_t i = 0; i < n_out; ++i) {
        tout[i] = outs[i];
        if (s->out_buf[i]) {
            tout[i].data = s->out_buf[i];
            tout[i].byte_offset = 0;
        }
    }
    const int rc = s->run(s->inner, tin, n_in, tout, n_out);
    if (rc) {
        s->op.error = arm_op_error(s->inner);
        return rc;
    }
    for (int32_t i = 0; i < n_out; ++i)
        if (s->out_buf[i]) arm_f32_to_f16(s->out_buf[i], arm_data(&outs[i]), mnn_tensor_numel(&outs[i]));
    return 0;
}
