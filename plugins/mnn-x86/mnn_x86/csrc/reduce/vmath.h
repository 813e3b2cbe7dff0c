/* Vectorizable math for the reduce family: plain C that GCC turns into SIMD in X86_CLONES loops. */
#ifndef MNN_X86_REDUCE_VMATH_H
#define MNN_X86_REDUCE_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) in double to about 1e-14 relative: x = n ln2 + r, |r| <= ln2/2, a degree-11 Taylor
 * polynomial of r times 2^n built in the exponent bits. The rounding of x/ln2 adds 1.5 * 2^52, so
 * n also sits in the low bits of t (no float-to-int conversion, which SSE2 lacks for doubles). */
static inline double x86_exp(double x) {
    const double big = 6755399441055744.0; /* 1.5 * 2^52 */
    const double xc = x < -708.0 ? -708.0 : (x > 709.0 ? 709.0 : x);
    const double t = xc * 1.4426950408889634 + big;
    const double n = t - big;
    const double r = (xc - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
    double p = 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits - 0x4338000000000000LL + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    double e = p * scale;
    e = x < -708.0 ? 0.0 : (x > 709.0 ? INFINITY : e);
    return x != x ? x : e;
}

#endif
