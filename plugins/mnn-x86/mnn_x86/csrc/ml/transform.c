/* What the ml kernels share: the post transforms, reading rows of any numeric dtype. The transforms
 * touch a handful of scores per row, so they call libm: the cost is in the trees and the dot products. */
#include <math.h>

#include "ml.h"

/* sqrt(2) * erfinv(2p - 1) with ONNX Runtime's erfinv (Winitzki, a = 0.147) in float32, as the
 * reference's probit: models are checked against ONNX Runtime, whose approximation this is */
float ml_probit(float p) {
    const float x = 2.0f * p - 1.0f;
    const float sign = x < 0 ? -1.0f : 1.0f;
    const float ln = logf((1.0f - x) * (1.0f + x));
    const float a = (float)(2.0 / (3.14159265358979323846 * 0.147)) + 0.5f * ln;
    const float b = ln / 0.147f;
    return (float)sqrt(2.0) * sign * sqrtf(-a + sqrtf(a * a - b));
}

double ml_logistic(double x) {
    const double e = 1.0 / (1.0 + exp(-fabs(x)));
    return x < 0 ? 1.0 - e : e;
}

static void softmax(double *s, int32_t k, int zero) {
    double top = s[0], sum = 0;
    for (int32_t c = 1; c < k; ++c) top = s[c] > top ? s[c] : top;
    if (!zero) {
        for (int32_t c = 0; c < k; ++c) sum += (s[c] = exp(s[c] - top));
        for (int32_t c = 0; c < k; ++c) s[c] /= sum;
        return;
    }
    /* SOFTMAX_ZERO: (near-)zero scores stay out of the sum and come out as s * exp(-top) / sum */
    for (int32_t c = 0; c < k; ++c) {
        const int kept = fabs(s[c]) > 1e-7;
        s[c] = kept ? exp(s[c] - top) : s[c] * exp(-top);
        if (kept) sum += s[c];
    }
    for (int32_t c = 0; c < k; ++c) s[c] /= sum;
}

void ml_post_transform(double *s, int32_t k, int32_t how) {
    switch (how) {
    case ML_LOGISTIC:
        for (int32_t c = 0; c < k; ++c) s[c] = ml_logistic(s[c]);
        break;
    case ML_SOFTMAX:
    case ML_SOFTMAX_ZERO: softmax(s, k, how == ML_SOFTMAX_ZERO); break;
    case ML_PROBIT:
        for (int32_t c = 0; c < k; ++c) s[c] = ml_probit((float)s[c]);
        break;
    default: break;
    }
}

double ml_load(const void *data, int32_t dtype, int64_t i) {
    switch (dtype) {
    case MNN_FLOAT64: return ((const double *)data)[i];
    case MNN_INT64: return (float)((const int64_t *)data)[i];
    case MNN_INT32: return (float)((const int32_t *)data)[i];
    default: return ((const float *)data)[i];
    }
}

void ml_rows(const mnn_tensor *t, int64_t *n, int64_t *f) {
    *n = t->ndim == 1 ? 1 : t->shape[0];
    *f = t->shape[t->ndim - 1];
}
