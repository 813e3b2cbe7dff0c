/* Run functions of the op layer (see ops.h): called by the core's run loop without the GIL. */
#include <arm_neon.h>
#include <string.h>

#include "move.h"
#include "ops.h"
#include "parallel.h"

const char *arm_op_error(void *state) { return ((arm_op *)state)->error; }

int arm_conv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_conv_state *s = (arm_conv_state *)state;
    (void)n_out;
    const float *bias = s->bias_input >= 0 && s->bias_input < n_in ? (const float *)arm_data(&ins[s->bias_input]) : s->bias;
    arm_conv_par(s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0]), bias);
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
    if (s->transposed) { /* C^T = B^T A^T: B^T packed at prepare is the A operand, A^T packed here the B one */
        arm_epilogue et = e;
        et.bias_rs = e.bias_cs, et.bias_cs = e.bias_rs;
        for (int64_t t = 0; t < s->batch; ++t) {
            s->k->pack_b(a + t * s->a_bs * eb, s->a_cs, s->a_rs, s->K, s->M, s->a_work);
            arm_gemm_par(s->k, arm_threads(s), s->N, s->M, s->K, s->b_packed, s->a_work, s->c_work, s->M, &et);
            arm_transpose_f32((float *)(y + t * s->M * s->N * eb), (const float *)s->c_work, s->M, s->N, s->M);
        }
        return 0;
    }
    const void *bp = s->b_packed;
    if (bp == NULL) {
        s->k->pack_b(arm_data(&ins[1]), s->b_rs, s->b_cs, s->K, s->N, s->b_work);
        bp = s->b_work;
    }
    for (int64_t t = 0; t < s->batch; ++t) {
        char *yt = y + t * s->M * s->N * eb;
        s->k->pack_a(a + t * s->a_bs * eb, s->a_rs, s->a_cs, s->M, s->K, s->a_work);
        arm_gemm_par(s->k, arm_threads(s), s->M, s->N, s->K, s->a_work, bp, s->write_ct ? s->c_work : yt, s->N, &e);
        if (s->write_ct) arm_transpose_f32((float *)yt, (const float *)s->c_work, s->N, s->M, s->N);
    }
    return 0;
}

/* element-wise work is split in runs of this many elements (a multiple of every vector width, so each
 * element meets the same vector or scalar code as on one thread) */
#define ELT_GRAIN 256
/* ... and only from this many elements per part on */
#define ELT_MIN_PART 16384

static int elt_parts(const void *state, int64_t n) {
    const int64_t most = n / ELT_MIN_PART;
    const int t = arm_threads(state);
    return most < 2 ? 1 : (most < t ? (int)most : t);
}

typedef struct binary_job {
    const arm_binary_state *s;
    const char *a, *b;
    char *y;
    int64_t inner; /* elements of y per index of dims[0] */
} binary_job;

/* indices [b, end) of the outermost collapsed dim (of the only one: a run of elements) */
static void binary_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const binary_job *j = (const binary_job *)ctx;
    const arm_binary_state *s = j->s;
    const int64_t eb = s->half ? 2 : 4;
    int64_t dims[MNN_MAX_DIMS];
    for (int d = 0; d < s->ndim; ++d) dims[d] = s->dims[d];
    dims[0] = end - b;
    const char *a = j->a + b * s->sa[0] * eb, *bb = j->b + b * s->sb[0] * eb;
    char *y = j->y + b * j->inner * eb;
    if (s->half) arm_binary_h(s->binop, a, bb, y, s->ndim, dims, s->sa, s->sb);
    else arm_binary(s->binop, (const float *)a, (const float *)bb, (float *)y, s->ndim, dims, s->sa, s->sb);
}

int arm_binary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_binary_state *s = (arm_binary_state *)state;
    (void)n_in, (void)n_out;
    binary_job j = {s, (const char *)arm_data(&ins[0]), (const char *)arm_data(&ins[1]), (char *)arm_data(&outs[0]), 1};
    for (int d = 1; d < s->ndim; ++d) j.inner *= s->dims[d];
    arm_parallel(elt_parts(s, s->dims[0] * j.inner), s->dims[0], s->ndim == 1 ? ELT_GRAIN : 1, binary_part, &j);
    return 0;
}

typedef struct unary_job {
    const arm_unary_state *s;
    const char *x;
    char *y;
} unary_job;

static void unary_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const unary_job *j = (const unary_job *)ctx;
    if (j->s->half) arm_activation_h(&j->s->epi, j->x + 2 * b, j->y + 2 * b, end - b);
    else arm_activation(&j->s->epi, (const float *)j->x + b, (float *)j->y + b, end - b);
}

int arm_unary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_unary_state *s = (arm_unary_state *)state;
    (void)n_in, (void)n_out;
    const int64_t n = mnn_tensor_numel(&ins[0]);
    unary_job j = {s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0])};
    arm_parallel(elt_parts(s, n), n, ELT_GRAIN, unary_part, &j);
    return 0;
}

/* rows of a row-wise op (affine channels, norm rows, softmax outer blocks, reduced rows, pooled planes) */
typedef struct rows_job {
    const void *s;
    const float *x, *scale, *shift;
    float *y;
} rows_job;

static void affine_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const rows_job *j = (const rows_job *)ctx;
    const arm_affine_state *s = (const arm_affine_state *)j->s;
    for (int64_t i = b; i < end; ++i) /* i = o * C + c: one channel plane */
        arm_channel_affine(j->x + i * s->inner, s->scale + i % s->C, s->shift + i % s->C, j->y + i * s->inner, 1, 1,
                           s->inner);
}

int arm_affine_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_affine_state *s = (arm_affine_state *)state;
    (void)n_in, (void)n_out;
    rows_job j = {s, (const float *)arm_data(&ins[0]), NULL, NULL, (float *)arm_data(&outs[0])};
    arm_parallel(elt_parts(s, s->outer * s->C * s->inner), s->outer * s->C, 1, affine_part, &j);
    return 0;
}

static void norm_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const rows_job *j = (const rows_job *)ctx;
    const arm_norm_state *s = (const arm_norm_state *)j->s;
    if (!s->per_row) {
        arm_normalize_rows(j->x + b * s->n, j->y + b * s->n, end - b, s->n, s->eps, j->scale, j->shift, 0);
        return;
    }
    for (int64_t r = b; r < end; ++r) { /* row r's scale and shift are those of channel r % per_row */
        const int64_t c = r % s->per_row;
        arm_normalize_rows(j->x + r * s->n, j->y + r * s->n, 1, s->n, s->eps, j->scale ? j->scale + c : NULL,
                           j->shift ? j->shift + c : NULL, 1);
    }
}

int arm_norm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_norm_state *s = (arm_norm_state *)state;
    (void)n_out;
    const float *scale = s->scale_input >= 0 && s->scale_input < n_in ? (const float *)arm_data(&ins[s->scale_input]) : s->scale;
    const float *shift = s->shift_input >= 0 && s->shift_input < n_in ? (const float *)arm_data(&ins[s->shift_input]) : s->shift;
    rows_job j = {s, (const float *)arm_data(&ins[0]), scale, shift, (float *)arm_data(&outs[0])};
    arm_parallel(elt_parts(s, s->rows * s->n), s->rows, 1, norm_part, &j);
    return 0;
}

static void reduce_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const rows_job *j = (const rows_job *)ctx;
    const arm_reduce_state *s = (const arm_reduce_state *)j->s;
    if (s->half) arm_reduce_rows_h((const char *)j->x + b * s->n * 2, (char *)j->y + b * 2, end - b, s->n, s->kind);
    else arm_reduce_rows(j->x + b * s->n, j->y + b, end - b, s->n, s->kind);
}

int arm_reduce_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_reduce_state *s = (arm_reduce_state *)state;
    (void)n_in, (void)n_out;
    rows_job j = {s, (const float *)arm_data(&ins[0]), NULL, NULL, (float *)arm_data(&outs[0])};
    arm_parallel(elt_parts(s, s->rows * s->n), s->rows, 1, reduce_part, &j);
    return 0;
}

static void softmax_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const rows_job *j = (const rows_job *)ctx;
    const arm_softmax_state *s = (const arm_softmax_state *)j->s;
    const int64_t block = s->axis * s->inner;
    arm_softmax(j->x + b * block, j->y + b * block, end - b, s->axis, s->inner, s->log, s->scale);
}

int arm_softmax_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_softmax_state *s = (arm_softmax_state *)state;
    (void)n_in, (void)n_out;
    rows_job j = {s, (const float *)arm_data(&ins[0]), NULL, NULL, (float *)arm_data(&outs[0])};
    arm_parallel(elt_parts(s, s->outer * s->axis * s->inner), s->outer, 1, softmax_part, &j);
    return 0;
}

static void pool_part(void *ctx, int64_t b, int64_t end, int tid) {
    const rows_job *j = (const rows_job *)ctx;
    const arm_pool_state *s = (const arm_pool_state *)j->s;
    float *work = s->work + tid * s->work_floats;
    if (s->half)
        arm_pool_h((const char *)j->x + b * s->g.H * s->g.W * 2, (char *)j->y + b * s->g.OH * s->g.OW * 2, end - b,
                   &s->g, work);
    else
        arm_pool(j->x + b * s->g.H * s->g.W, j->y + b * s->g.OH * s->g.OW, end - b, &s->g, work);
}

int arm_pool_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_pool_state *s = (arm_pool_state *)state;
    (void)n_in, (void)n_out;
    rows_job j = {s, (const float *)arm_data(&ins[0]), NULL, NULL, (float *)arm_data(&outs[0])};
    int parts = elt_parts(s, s->planes * s->g.OH * s->g.OW * s->g.kh * s->g.kw);
    if (parts > s->slices) parts = s->slices > 0 ? s->slices : 1;
    arm_parallel(parts, s->planes, 1, pool_part, &j);
    return 0;
}

/* 2 to 4 inputs of one 4-byte element a row each (a stack along a new last axis): interleaved by st2 / st3 / st4,
 * four rows a store; returns the rows done */
static int64_t concat_stack4(const arm_concat_state *s, const mnn_tensor *ins, int32_t n_in, char *y) {
    if (s->elem != 4 || s->n != n_in || n_in < 2 || n_in > 4) return 0;
    for (int32_t i = 0; i < n_in; ++i)
        if (s->block[i] != 1) return 0;
    const float *a = (const float *)arm_data(&ins[0]), *b = (const float *)arm_data(&ins[1]);
    const float *c = n_in > 2 ? (const float *)arm_data(&ins[2]) : a;
    const float *d = n_in > 3 ? (const float *)arm_data(&ins[3]) : a;
    float *q = (float *)y;
    int64_t o = 0;
    for (; o + 4 <= s->outer; o += 4) {
        if (n_in == 2) {
            const float32x4x2_t v = {{vld1q_f32(a + o), vld1q_f32(b + o)}};
            vst2q_f32(q + o * 2, v);
        } else if (n_in == 3) {
            const float32x4x3_t v = {{vld1q_f32(a + o), vld1q_f32(b + o), vld1q_f32(c + o)}};
            vst3q_f32(q + o * 3, v);
        } else {
            const float32x4x4_t v = {{vld1q_f32(a + o), vld1q_f32(b + o), vld1q_f32(c + o), vld1q_f32(d + o)}};
            vst4q_f32(q + o * 4, v);
        }
    }
    return o;
}

int arm_concat_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_concat_state *s = (arm_concat_state *)state;
    (void)n_out;
    char *y = (char *)arm_data(&outs[0]);
    int64_t row_bytes = 0;
    for (int32_t i = 0; i < s->n && i < n_in; ++i) row_bytes += s->block[i] * s->elem;
    const int64_t first = concat_stack4(s, ins, n_in, y);
    y += first * row_bytes;
    for (int64_t o = first; o < s->outer; ++o)
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
    if (s->zx_input >= 0 && s->zx_input < n_in) { /* db holds offset - zx: the column side's correction */
        const void *z = arm_data(&ins[s->zx_input]);
        s->zx = s->is_uint8 ? (int32_t)*(const uint8_t *)z : (int32_t)*(const int8_t *)z;
        *(int32_t *)s->epi.db = (s->is_uint8 ? 128 : 0) - s->zx;
    }
    arm_qepilogue e = s->epi;
    if (s->bias_input >= 0 && s->bias_input < n_in) e.bias = (const int32_t *)arm_data(&ins[s->bias_input]);
    arm_qconv_par(s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0]), &e);
    return 0;
}

int arm_qmatmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_qmatmul_state *s = (arm_qmatmul_state *)state;
    (void)n_out;
    /* the epilogue's da / db / colsum and bp point at this state's own writable buffers */
    if (s->za_input >= 0 && s->za_input < n_in) {
        const void *z = arm_data(&ins[s->za_input]);
        *(int32_t *)s->epi.da = (s->a_uint8 ? 128 : 0) - (s->a_uint8 ? *(const uint8_t *)z : *(const int8_t *)z);
    }
    if (s->zb_input >= 0 && s->zb_input < n_in) {
        const void *z = arm_data(&ins[s->zb_input]);
        const int64_t nz = mnn_tensor_numel(&ins[s->zb_input]);
        for (int64_t c = 0; c < s->N; ++c) {
            const int64_t i = nz == 1 ? 0 : c;
            const int32_t zb = s->b_uint8 ? ((const uint8_t *)z)[i] : ((const int8_t *)z)[i];
            ((int32_t *)s->epi.db)[c] = (s->b_uint8 ? 128 : 0) - zb;
        }
    }
    if (s->b_input >= 0 && s->b_input < n_in)
        arm_q_pack_b(arm_data(&ins[s->b_input]), s->b_uint8, s->N, 1, s->K, s->N, (int8_t *)s->bp,
                     (int32_t *)s->epi.colsum);
    const char *a = (const char *)arm_data(&ins[0]);
    char *y = (char *)arm_data(&outs[0]);
    arm_qepilogue e = s->epi;
    e.rowsum = s->rowsum;
    const int64_t batch = s->M ? mnn_tensor_numel(&ins[0]) / (s->M * s->K > 0 ? s->M * s->K : 1) : 0;
    for (int64_t t = 0; t < batch; ++t) {
        arm_q_pack_a(a + t * s->M * s->K, s->a_uint8, s->K, 1, s->M, s->K, s->ap, s->rowsum);
        arm_qgemm_par(s->k, arm_threads(s), s->M, s->N, arm_k4(s->K), s->ap, s->bp, s->acc, s->N);
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
