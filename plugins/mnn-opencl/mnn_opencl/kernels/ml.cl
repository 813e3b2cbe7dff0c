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

/* two classes from one score v (ONNX Runtime's expansion, mnn_core.ops.ml._one_score): PROBIT gives
 * [probit(v), 0], LOGISTIC [1 - p, p], else [1 - v, v], or [-v, v] where extra >= 2; extra < 0 keeps [v, 0] */
inline void ml_one_score(float v, int how, int extra, __global float *z) {
    if (how == 4) {
        z[0] = ml_probit(v);
        z[1] = 0.0f;
        return;
    }
    float lo = extra >= 2 ? -v : 1.0f - v, hi = v;
    if (how == 2) {
        hi = ml_logistic(v);
        lo = 1.0f - hi;
    }
    z[0] = extra < 0 ? v : lo;
    z[1] = extra < 0 ? 0.0f : hi;
}

/* k = 1: the score's sign picks one of two labels, and it becomes two scores */
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
    if (k == 1) best = s[0] > 0.0f ? 1 : 0;
    label[lo + r] = as_long((uint2)(table[labels + 2 * best], table[labels + 2 * best + 1]));
    if (k == 1) {
        ml_one_score(s[0], how, 0, z + zo + r * 2);
    } else {
        ml_finish(s, k, how, z + zo + r * k);
    }
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

/* two classes, ONNX Runtime's rules (mnn_core.ops.ml_trees._binary_scores): binary bit 1 when every vote
 * is for one class id, bit 2 when its weights are all >= 0; the label, or 0/1 itself without bit 1 */
inline long ml_two_class(float *s, bool *voted, __global const uint *table, int base, int n_base, int labels,
                         int binary, int how, __global float *z) {
    float s0 = s[0], s1 = s[1];
    bool h0 = voted[0], h1 = voted[1], two = true;
    int extra = -1;
    if (n_base == 2) {
        float b1 = as_float(table[base + 1]);
        s1 = h1 ? b1 + s[0] : s[1] + b1;
        s0 = h1 ? -(b1 + s[0]) : s[0] + as_float(table[base]);
    } else if (n_base == 1) {
        s0 += as_float(table[base]);
        two = h1;
    } else {
        extra = 3;
        two = h1;
    }
    float pos = two && h1 ? s1 : (h0 ? s0 : 0.0f);
    long y;
    if (binary & 1) {
        bool positive = (binary & 2) != 0;
        bool win = pos > (positive ? 0.5f : 0.0f);
        extra = (win ? 0 : 1) + (positive ? 0 : 2);
        int at = labels + (win ? 2 : 0);
        y = as_long((uint2)(table[at], table[at + 1]));
    } else {
        y = pos > 0.0f ? 1 : 0;
    }
    float v[2] = {h0 ? s0 : 0.0f, h1 ? s1 : 0.0f};
    if (two) {
        ml_finish(v, 2, how, z);
    } else {
        ml_one_score(v[0], how, extra, z);
    }
    return y;
}

/* every tree walked to a leaf, its class weights added tree by tree in float32; k >= 3: base values added
 * and voting; the label is the first best score among the voted classes, unvoted scores are 0 */
__kernel void ml_trees(__global const float *x, int xo, __global const uint *table, int to, __global long *label,
                       int lo, __global float *z, int zo, int n, int f, int k, int how, int trees, int thr, int w,
                       int has, int roots, int labels, int base, int n_base, int steps, int binary) {
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
    if (k == 2) {
        label[lo + r] = ml_two_class(s, voted, table, base, n_base, labels, binary, how, z + zo + r * 2);
        return;
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
