/* Training runs: convolution and max-pool backward, ReluGrad, SumToShape,
 * softmax cross-entropy and the optimizer updates (see ops_grad.h), and the
 * run-time choice of the ISA table of the training kernels. */
#include <string.h>

#include "ops_grad.h"

extern const x86_grad_kernels x86_grad_kernels_scalar;
#if defined(__x86_64__) || defined(__i386__)
extern const x86_grad_kernels x86_grad_kernels_avx2;
extern const x86_grad_kernels x86_grad_kernels_avx512;
#endif

const x86_grad_kernels *x86_grad_kernels_for(const char *isa) {
    if (!x86_cpu_supports(isa)) return NULL;
    if (strcmp(isa, "scalar") == 0) return &x86_grad_kernels_scalar;
#if defined(__x86_64__) || defined(__i386__)
    if (strcmp(isa, "avx2") == 0) return &x86_grad_kernels_avx2;
    if (strcmp(isa, "avx512") == 0) return &x86_grad_kernels_avx512;
#endif
    return NULL;
}

static int all_f32(x86_op *op, const mnn_tensor *t, int32_t n, const char *what) {
    for (int32_t i = 0; i < n; ++i) {
        if (t[i].data != NULL && t[i].dtype != MNN_FLOAT32) {
            op->error = what;
            return 0;
        }
    }
    return 1;
}

int x86_convgrad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_convgrad_state *s = (x86_convgrad_state *)state;
    if (!all_f32(&s->op, ins, n_in, "x86 Conv/ConvGradWeight/ConvGradInput take float32 tensors")) return 1;
    const float *dy = (const float *)ins[0].data;
    if (s->which == X86_CONV_FORWARD) {
        const float *bias = n_in > 2 && ins[2].data ? (const float *)ins[2].data : NULL;
        s->gk->conv_forward(dy, (const float *)ins[1].data, bias, (float *)outs[0].data, &s->g, s->relu, s->work,
                            s->op.threads);
    } else if (s->which == X86_CONV_GRAD_WEIGHT) {
        float *db = n_out > 1 && outs[1].data ? (float *)outs[1].data : NULL;
        s->gk->conv_grad_weight(dy, (const float *)ins[1].data, (float *)outs[0].data, db, &s->g, s->work,
                                s->op.threads);
    } else {
        s->gk->conv_grad_input(dy, (const float *)ins[1].data, (float *)outs[0].data, &s->g, s->work, s->op.threads);
    }
    return 0;
}

int x86_poolgrad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_poolgrad_state *s = (x86_poolgrad_state *)state;
    (void)n_out;
    if (!all_f32(&s->op, ins, n_in, "x86 MaxPool/MaxPoolGrad take float32 tensors")) return 1;
    if (s->forward) {
        s->gk->max_pool_2x2((const float *)ins[0].data, (float *)outs[0].data, s->planes, &s->g, s->op.threads);
        return 0;
    }
    s->gk->max_pool_grad((const float *)ins[0].data, (const float *)ins[1].data, (float *)outs[0].data, s->planes,
                         &s->g, s->op.threads);
    return 0;
}

int x86_relugrad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_relugrad_state *s = (x86_relugrad_state *)state;
    (void)n_out;
    if (!all_f32(&s->op, ins, n_in, "x86 ReluGrad takes float32 tensors")) return 1;
    s->gk->relu_grad((const float *)ins[0].data, (const float *)ins[1].data, (float *)outs[0].data,
                     mnn_tensor_numel(&outs[0]), s->op.threads);
    return 0;
}

int x86_sumto_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_sumto_state *s = (x86_sumto_state *)state;
    (void)n_out;
    if (!all_f32(&s->op, ins, n_in, "x86 SumToShape takes float32 tensors")) return 1;
    if (mnn_tensor_numel(&ins[0]) == 0) { /* nothing to add: zeros */
        memset(outs[0].data, 0, (size_t)s->ysize * sizeof(float));
        return 0;
    }
    s->gk->sum_to((const float *)ins[0].data, (float *)outs[0].data, s->ysize, s->ndim, s->dims, s->ystrides);
    return 0;
}

int x86_ce_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_ce_state *s = (x86_ce_state *)state;
    (void)n_in;
    (void)n_out;
    const int32_t first = s->grad ? 1 : 0; /* the logits */
    if (ins[first].dtype != MNN_FLOAT32 || (s->grad && ins[0].dtype != MNN_FLOAT32)) {
        s->op.error = "x86 SoftmaxCrossEntropy takes float32 logits";
        return 1;
    }
    const void *target = ins[first + 1].data;
    const int rc = s->grad ? s->gk->softmax_ce_grad((const float *)ins[0].data, (const float *)ins[1].data, target,
                                                    (float *)outs[0].data, &s->g)
                           : s->gk->softmax_ce((const float *)ins[0].data, target, (float *)outs[0].data, &s->g);
    if (rc) {
        s->op.error = "SoftmaxCrossEntropy: a target class is out of range [0, number of classes); "
                      "check the labels (or set ignore_index for the ones to skip)";
        return 1;
    }
    return 0;
}

static float scalar_of(const mnn_tensor *t) { return *(const float *)t->data; }

int x86_optim_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_optim_state *s = (x86_optim_state *)state;
    (void)n_out;
    if (!all_f32(&s->op, ins, n_in, "x86 optimizer updates take float32 tensors")) return 1;
    x86_optim_params o = s->p;
    const int64_t n = mnn_tensor_numel(&ins[0]);
    const float *p = (const float *)ins[0].data, *g = (const float *)ins[1].data;
    switch (s->kind) {
    case X86_OPT_SGD:
        o.lr = scalar_of(&ins[2]);
        s->gk->sgd(p, g, (float *)outs[0].data, n, &o, s->op.threads);
        break;
    case X86_OPT_MOMENTUM:
        o.lr = scalar_of(&ins[3]);
        o.step = n_in > 4 && ins[4].data ? scalar_of(&ins[4]) : 0.0f;
        s->gk->sgd_momentum(p, g, (const float *)ins[2].data, (float *)outs[0].data, (float *)outs[1].data, n, &o,
                            s->op.threads);
        break;
    default:
        o.lr = scalar_of(&ins[4]);
        o.step = scalar_of(&ins[5]);
        s->gk->adam(p, g, (const float *)ins[2].data, (const float *)ins[3].data, (float *)outs[0].data,
                    (float *)outs[1].data, (float *)outs[2].data, n, &o, s->op.threads);
        break;
    }
    return 0;
}

int x86_gemmrt_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_gemmrt_state *s = (x86_gemmrt_state *)state;
    (void)n_out;
    if (!all_f32(&s->op, ins, n_in, "x86 Gemm takes float32 tensors")) return 1;
    const float *bias = n_in > 2 && ins[2].data ? (const float *)ins[2].data : NULL;
    s->gk->gemm_rt(s->M, s->N, s->K, (const float *)ins[0].data, s->ars, s->acs, (const float *)ins[1].data,
                   s->transB, bias, s->relu, (float *)outs[0].data, s->op.threads);
    return 0;
}
