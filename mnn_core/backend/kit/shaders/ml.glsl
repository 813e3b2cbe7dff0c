// Shared by the classifier shaders (ml_linear, ml_trees): one row's class scores in registers
// (at most ML_MAX_CLASSES, mnn_core.backend.kit.ml), its post transform, and its outputs.
#define ML_MAX_CLASSES 64

float score[ML_MAX_CLASSES];

float ml_logistic(float x) {
    float e = 1.0 / (1.0 + exp(-abs(x)));
    return x < 0.0 ? 1.0 - e : e;
}

// sqrt(2) * erfinv(2p - 1) with ONNX Runtime's approximation (Winitzki, a = 0.147)
float ml_probit(float p) {
    float x = 2.0 * p - 1.0;
    float ln = log((1.0 - x) * (1.0 + x));
    float a = 2.0 / (3.14159265358979 * 0.147) + 0.5 * ln;
    float b = ln / 0.147;
    return 1.41421356 * (x < 0.0 ? -1.0 : 1.0) * sqrt(-a + sqrt(a * a - b));
}

// how: NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT (kit.ml.TRANSFORMS)
void ml_post_transform(uint k, uint how) {
    if (how == 2u || how == 4u) {
        for (uint c = 0u; c < k; ++c) score[c] = how == 2u ? ml_logistic(score[c]) : ml_probit(score[c]);
    } else if (how == 1u || how == 3u) {
        float top = score[0];
        for (uint c = 1u; c < k; ++c) top = max(top, score[c]);
        float sum = 0.0;
        for (uint c = 0u; c < k; ++c) {
            bool kept = how == 1u || abs(score[c]) > 1e-7;  // SOFTMAX_ZERO leaves zeros out of the sum
            score[c] = kept ? exp(score[c] - top) : score[c] * exp(-top);
            if (kept) sum += score[c];
        }
        for (uint c = 0u; c < k; ++c) score[c] /= sum;
    }
}

// Two classes from one score v (ONNX Runtime's expansion): PROBIT gives [probit(v), 0], LOGISTIC
// [1 - p, p] with p = logistic(v), else [1 - v, v], or [-v, v] where extra >= 2; extra < 0 keeps
// [v, 0]. (mnn_core.ops.ml._one_score)
void ml_one_score(float v, uint how, int extra) {
    if (how == 4u) {
        score[0] = ml_probit(v);
        score[1] = 0.0;
        return;
    }
    float lo = extra >= 2 ? -v : 1.0 - v, hi = v;
    if (how == 2u) {
        hi = ml_logistic(v);
        lo = 1.0 - hi;
    }
    score[0] = extra < 0 ? v : lo;
    score[1] = extra < 0 ? 0.0 : hi;
}
