/* Vector primitives, scalar edition: one float per "vector", plain C.
 * Compiled with -O3 only (the compiler may still use the x86-64 baseline SSE2). */
#ifndef MNN_X86_VEC_SCALAR_H
#define MNN_X86_VEC_SCALAR_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ISA scalar
#define VLEN 1
#ifndef GEMM_MR /* overridable to try other tiles */
#define GEMM_MR 4
#endif
#define GEMM_NV 8 /* NR = GEMM_NV * VLEN = 8 */

typedef float vf;
typedef int vmask;

static inline vf vf_set1(float x) { return x; }
static inline vf vf_zero(void) { return 0.0f; }
static inline vf vf_load(const float *p) { return *p; }
static inline void vf_store(float *p, vf v) { *p = v; }
static inline void vf_stream(float *p, vf v) { *p = v; } /* plain: nothing to fence */
static inline void vf_stream_fence(void) {}
static inline vf vf_load_n(const float *p, int n) { return n > 0 ? *p : 0.0f; }
static inline void vf_store_n(float *p, vf v, int n) { if (n > 0) *p = v; }
static inline vf vf_add(vf a, vf b) { return a + b; }
static inline vf vf_sub(vf a, vf b) { return a - b; }
static inline vf vf_mul(vf a, vf b) { return a * b; }
static inline vf vf_div(vf a, vf b) { return a / b; }
static inline vf vf_fma(vf a, vf b, vf c) { return a * b + c; }  /* a*b + c */
static inline vf vf_fnma(vf a, vf b, vf c) { return c - a * b; } /* c - a*b */
static inline vf vf_max(vf a, vf b) { return a > b ? a : b; }
static inline vf vf_min(vf a, vf b) { return a < b ? a : b; }
static inline vf vf_abs(vf a) { return fabsf(a); }
static inline vmask vf_lt(vf a, vf b) { return a < b; }
static inline vmask vf_ge(vf a, vf b) { return a >= b; }
static inline vmask vf_isnan(vf a) { return a != a; }
static inline vf vf_select(vmask m, vf t, vf f) { return m ? t : f; }
static inline float vf_hsum(vf v) { return v; }
static inline float vf_hmax(vf v) { return v; }
/* every VLEN-th element from p with stride s */
static inline vf vf_load_stride(const float *p, int64_t s) { (void)s; return *p; }

static inline vf vf_round(vf a) { return rintf(a); }
/* x*x - x2 exactly (x2 = x*x rounded): a float product is exact in double */
static inline vf vf_sqr_err(vf x, vf x2) { return (float)((double)x * (double)x - (double)x2); }
static inline vf vf_copysign(vf mag, vf sign) { return copysignf(mag, sign); }
static inline vf vf_pow2n(vf n) { /* 2^n for integral n in [-126, 127] */
    const uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

/* p[0] if avail > 0 (the vector of one lane) */
static inline vf vf_load_even_n(const float *p, int avail) { return avail > 0 ? *p : 0.0f; }

/* a 1 x 1 block is its own transpose */
static inline void vf_transpose(vf r[1]) { (void)r; }

#endif
