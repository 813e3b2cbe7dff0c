/* The harness's shared helpers (harness.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int checks, failures;
static uint64_t rng_state = 88172645463325252ull;

double urand(void) { /* xorshift64, in [0, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}
float frand(void) { return (float)(urand() * 2.0 - 1.0); }
int irand(int lo, int hi) { return lo + (int)(urand() * (hi - lo + 1)); }

void *xalloc(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64) != 0) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(p, 0, n ? n : 64);
    return p;
}

void report(const char *what, double worst, int ok) {
    ++checks;
    if (!ok) ++failures;
    printf("%-4s %-60s worst %.3g\n", ok ? "ok" : "FAIL", what, worst);
}

/* got vs want with per-element magnitude mag (sum of |terms|) */
void compare(const char *what, const float *got, const double *want, const double *mag, int64_t n,
                    double rtol) {
    double worst = 0.0;
    int ok = 1;
    for (int64_t i = 0; i < n; ++i) {
        const double scale = fabs(want[i]) > mag[i] ? fabs(want[i]) : mag[i];
        const double err = fabs((double)got[i] - want[i]) / (scale > 1e-30 ? scale : 1e-30);
        if (!(err <= rtol)) ok = 0;
        if (err > worst || err != err) worst = err;
    }
    report(what, worst, ok);
}

double act_ref(int act, double v, double a, double b) {
    switch (act) {
    case MNN_ACT_RELU: return v > 0 ? v : 0;
    case MNN_ACT_CLIP: return v < a ? a : (v > b ? b : v);
    case MNN_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case MNN_ACT_SILU: return v / (1.0 + exp(-v));
    case MNN_ACT_HARD_SWISH: return v * fmin(fmax(v / 6.0 + 0.5, 0.0), 1.0);
    default: return v;
    }
}

arm_conv_geom geom(int64_t C, int64_t H, int64_t W, int64_t k, int64_t s, int64_t d, int64_t p) {
    arm_conv_geom g = {C, H, W, 0, 0, k, k, s, s, d, d, p, p};
    g.OH = (H + 2 * p - d * (k - 1) - 1) / s + 1;
    g.OW = (W + 2 * p - d * (k - 1) - 1) / s + 1;
    return g;
}
