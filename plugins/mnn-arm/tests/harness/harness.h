/* What the harness's files share: the check counters, random numbers, aligned buffers, the
 * report and comparison of a check, the activation reference and the convolution geometry. */
#ifndef MNN_ARM_HARNESS_H
#define MNN_ARM_HARNESS_H
#include <stddef.h>
#include <stdint.h>

#include "arm.h"

extern int checks, failures;
double urand(void);
float frand(void);
int irand(int lo, int hi);
void *xalloc(size_t n);
void report(const char *what, double worst, int ok);
void compare(const char *what, const float *got, const double *want, const double *mag, int64_t n, double rtol);
double act_ref(int act, double v, double a, double b);
arm_conv_geom geom(int64_t C, int64_t H, int64_t W, int64_t k, int64_t s, int64_t d, int64_t p);

/* the int8 checks (harness_int8.c) */
void test_requant(void);
void test_int8_path(const arm_qkernels *k);
#endif
