/* LayerNormalization with broadcast scale and bias (reduce.h): the statistics as the reference takes
 * them (the mean, then the mean of squared deviations, in double), then each line of the last
 * normalized axis with its scale and bias strides (0 or 1). */
#include <math.h>

#include "reduce.h"

#define LANES 16
#define GRAIN 16384 /* input elements: less is not worth a thread */

typedef struct {
    const x86_layernorm_state *s;
    const char *x, *scale, *bias;
    char *y;
} layernorm_job;

/* the sum of E(v) over a row of n (v = (double)x[j]) in LANES partial sums and one for the tail */
#define LANE_SUM(E) \
    double l[LANES], t = 0.0; \
    const int64_t body = n / LANES * LANES; \
    for (int k = 0; k < LANES; k++) l[k] = 0.0; \
    for (int64_t j = 0; j < body; j += LANES) \
        for (int k = 0; k < LANES; k++) { \
            const double v = (double)x[j + k]; \
            l[k] += E; \
        } \
    for (int64_t j = body; j < n; j++) { \
        const double v = (double)x[j]; \
        t += E; \
    } \
    for (int k = 0; k < 8; k++) l[k] += l[k + 8]; \
    for (int k = 0; k < 4; k++) l[k] += l[k + 4]; \
    return t + ((l[0] + l[2]) + (l[1] + l[3]))

#define LAYERNORM(T, S) \
    static X86_CLONES double row_sum_##S(const T *x, int64_t n) { LANE_SUM(v); } \
    static X86_CLONES double row_deviation_##S(const T *x, int64_t n, double mean) { \
        LANE_SUM((v - mean) * (v - mean)); \
    } \
    static X86_CLONES void line_##S(const T *x, T *y, int64_t len, double mean, double sd, const T *sc, int64_t ss, \
                                    const T *bi, int64_t bs) { \
        for (int64_t i = 0; i < len; i++) \
            y[i] = (T)(((double)x[i] - mean) / sd * (double)sc[i * ss] + (double)bi[i * bs]); \
    } \
    static void row_##S(const layernorm_job *j, int64_t r) { \
        const x86_layernorm_state *s = j->s; \
        static const T one = 1, zero = 0; \
        const T *x = (const T *)j->x + r * s->n, *sc = j->scale ? (const T *)j->scale : &one; \
        const T *bi = j->bias ? (const T *)j->bias : &zero; \
        T *y = (T *)j->y + r * s->n; \
        const int last = s->nd - 1; \
        const int64_t len = s->dim[last], ss = j->scale ? s->sstr[last] : 0, bs = j->bias ? s->bstr[last] : 0; \
        const double mean = row_sum_##S(x, s->n) / (double)s->n; \
        const double var = row_deviation_##S(x, s->n, mean) / (double)s->n; \
        const double sd = sqrt(var + s->eps); \
        int64_t idx[MNN_MAX_DIMS] = {0}, so = 0, bo = 0; \
        for (int64_t at = 0; at < s->n; at += len) { \
            line_##S(x + at, y + at, len, mean, sd, sc + (j->scale ? so : 0), ss, bi + (j->bias ? bo : 0), bs); \
            for (int k = last - 1; k >= 0; k--) { /* the odometer over the leading normalized axes */ \
                so += s->sstr[k], bo += s->bstr[k]; \
                if (++idx[k] < s->dim[k]) break; \
                so -= s->sstr[k] * s->dim[k], bo -= s->bstr[k] * s->dim[k], idx[k] = 0; \
            } \
        } \
    }

LAYERNORM(float, f32) /* the op takes float32 (and 16-bit floats, which stay on the reference) */

static void rows_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const layernorm_job *j = (const layernorm_job *)ctx;
    (void)worker;
    for (int64_t r = lo; r < hi; r++) row_f32(j, r);
}

int x86_layernorm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_layernorm_state *s = (x86_layernorm_state *)state;
    (void)n_out;
    s->dtype = ins[0].dtype;
    if (s->dtype != MNN_FLOAT32) {
        s->op.error = "LayerNormalization: a dtype this kernel was not built for";
        return 1;
    }
    if (s->rows == 0 || s->n == 0) return 0;
    layernorm_job j = {s, (const char *)ins[0].data, NULL, NULL, (char *)outs[0].data};
    if (s->scale_input >= 0 && s->scale_input < n_in) j.scale = (const char *)ins[s->scale_input].data;
    if (s->bias_input >= 0 && s->bias_input < n_in) j.bias = (const char *)ins[s->bias_input].data;
    x86_pool->ranges(s->op.threads, s->rows, GRAIN / s->n + 1, rows_range, &j);
    return 0;
}
