/* The classic-ML ops (ai.onnx.ml): Scaler, Normalizer, LinearClassifier and TreeEnsembleClassifier.
 * A classifier's row is one work item holding its class scores (at most ML_MAX_CLASSES), as
 * mnn_core.backend.kit.ml lays out their tables (32-bit words) and declines the rest. */
#define ML_MAX_CLASSES 64

__kernel void ml_scaler(__global const float *x, int xo, __global const float *table, int to, __global float *y,
                        int yo, int total, int width, int count) {
    int i = get_global_id(0);
    if (i >= total) return;
    int j = count == 1 ? 0 : i % width;
    y[yo + i] = (x[xo + i] - table[to + j]) * table[to + count + j];
}

/* each row divided by its max (norm 0), L1 norm (1), or sign(x) sqrt(x^2 / sum x^2) (2); a zero norm leaves it */
__kernel void ml_normalizer(__global const float *x, int xo, __global float *y, int yo, int rows, int cols,
                            int norm) {
    int r = get_global_id(0);
    if (r >= rows) return;
    x += xo + r * cols;
    y += yo + r * cols;
    float d = norm == 0 ? x[0] : 0.0f;
    for (int c = 0; c < cols; ++c) d = norm == 0 ? fmax(d, x[c]) : d + (norm == 1 ? fabs(x[c]) : x[c] * x[c]);
    for (int c = 0; c < cols; ++c) {
        float v = x[c];
        if (norm == 2) {
            y[c] = d == 0.0f ? v : sqrt(v * v / d) * (v < 0.0f ? -1.0f : 1.0f);
        } else {
            y[c] = v / (d == 0.0f ? 1.0f : d);
        }
    }
}

inline float ml_logistic(float x) {
    float e = 1.0f / (1.0f + exp(-fabs(x)));
    return x < 0.0f ? 1.0f - e : e;
}

/* sqrt(2) * erfinv(2p - 1) with ONNX Runtime's approximation (Winitzki, a = 0.147) */
inline float ml_probit(float p) {
    float x = 2.0f * p - 1.0f;
    float ln = log((1.0f - x) * (1.0f + x));
    float a = 2.0f / (3.14159265358979f * 0.147f) + 0.5f * ln;
    float b = ln / 0.147f;
    return 1.41421356f * (x < 0.0f ? -1.0f : 1.0f) * sqrt(-a + sqrt(a * a - b));
}

/* kit.ml.TRANSFORMS: NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT; then the row's scores out */
inline void ml_finish(float *s, int k, int how, __global float *z) {
    if (how == 2 || how == 4) {
        for (int c = 0; c < k; ++c) s[c] = how == 2 ? ml_logistic(s[c]) : ml_probit(s[c]);
    } else if (how == 1 || how == 3) {
        float top = s[0];
        for (int c = 1; c < k; ++c) top = fmax(top, s[c]);
        float sum = 0.0f;
        for (int c = 0; c < k; ++c) {
            bool kept = how == 1 || fabs(s[c]) > 1e-7f; /* SOFTMAX_ZERO leaves zeros out of the sum */
            s[c] = kept ? exp(s[c] - top) : s[c] * exp(-top);
            if (kept) sum += s[c];
        }
        for (int c = 0; c < k; ++c) s[c] /= sum;
    }
    for (int c = 0; c < k; ++c) z[c] = s[c];
}

__kernel void ml_linear(__global const float *x, int xo, __global const uint *table, int to, __global long *label,
                        int lo, __global float *z, int zo, int n, int f, int k, int how, int icpt, int labels) {
    int r = get_global_id(0);
    if (r >= n) return;
    float s[ML_MAX_CLASSES];
    table += to;
    int best = 0;
    for (int c = 0; c < k; ++c) {
        float acc = 0.0f;
        for (int j = 0; j < f; ++j) acc += x[xo + r * f + j] * as_float(table[c * f + j]);
        s[c] = acc + as_float(table[icpt + c]);
        if (s[c] > s[best]) best = c;
    }
    label[lo + r] = as_long((uint2)(table[labels + 2 * best], table[labels + 2 * best + 1]));
    ml_finish(s, k, how, z + zo + r * k);
}

/* the node's comparison (LEQ, LT, GTE, GT, EQ, NEQ in the low byte), or for NaN its missing-value rule */
inline bool ml_goes_true(float v, float t, uint mode) {
    if (isnan(v)) return (mode >> 8) != 0 || (mode & 255) == 5; /* NaN != t holds */
    switch (mode & 255) {
    case 0: return v <= t;
    case 1: return v < t;
    case 2: return v >= t;
    case 3: return v > t;
    case 4: return v == t;
    default: return v != t;
    }
}

/* every tree walked to a leaf, its class weights added tree by tree in float32; base values added and
 * voting; the label is the first best score among the voted classes, unvoted scores are 0 */
__kernel void ml_trees(__global const float *x, int xo, __global const uint *table, int to, __global long *label,
                       int lo, __global float *z, int zo, int n, int f, int k, int how, int trees, int thr, int w,
                       int has, int roots, int labels, int base, int n_base, int steps) {
    int r = get_global_id(0);
    if (r >= n) return;
    float s[ML_MAX_CLASSES];
    bool voted[ML_MAX_CLASSES];
    table += to;
    for (int c = 0; c < k; ++c) {
        s[c] = 0.0f;
        voted[c] = false;
    }
    for (int t = 0; t < trees; ++t) {
        uint node = table[roots + t];
        for (int step = 0; step < steps; ++step) {
            uint mode = table[4 * node + 1];
            if ((mode & 255) == 6) break; /* a leaf */
            float v = x[xo + r * f + table[4 * node]];
            node = table[4 * node + (ml_goes_true(v, as_float(table[thr + node]), mode) ? 2 : 3)];
        }
        for (int c = 0; c < k; ++c) {
            s[c] += as_float(table[w + node * k + c]);
            voted[c] = voted[c] || table[has + node * k + c] != 0;
        }
    }
    for (int c = 0; c < n_base; ++c) {
        s[c] += as_float(table[base + c]);
        voted[c] = true;
    }
    int best = 0;
    bool any = false;
    for (int c = 0; c < k; ++c) {
        if (voted[c] && (!any || s[c] > s[best])) best = c;
        any = any || voted[c];
        if (!voted[c]) s[c] = 0.0f;
    }
    label[lo + r] = as_long((uint2)(table[labels + 2 * best], table[labels + 2 * best + 1]));
    ml_finish(s, k, how, z + zo + r * k);
}
