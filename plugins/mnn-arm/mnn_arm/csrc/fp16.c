/* The fp16 path (compiled -march=armv8.2-a+fp16; run only where the CPU
 * reports asimdhp): operands are packed to half precision, the 8x24 register
 * tile multiplies-accumulates 8 halves per instruction (vfmaq_laneq_f16), so
 * one k-step of a tile twice the fp32 tile's width costs the same number of
 * instructions. Partial sums are carried in fp16 for 256 steps at most, then
 * in fp32 (fp16_body.h); results are stored as fp32. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"

#define ELEM __fp16
#define MR 8
#define NR 24
#define LANES 8
#define NV 3
#define KC 512

static inline void store4(__fp16 *d, float32x4_t v) { vst1_f16(d, vcvt_f16_f32(v)); }
#define XV 4
#define COPY_X(d, s) store4(d, vld1q_f32(s))
#define COPY_X2(d, s) store4(d, vld2q_f32(s).val[0]) /* every other element */

/* one-row GEMMs as a matrix-vector product (fp16_body.h) */
static void gemv_row_h(int64_t N, int64_t K, const __fp16 *ap, const __fp16 *bp, void *c);
#define GEMV_ROW gemv_row_h

#include "fgemm_body.h"
#include "fp16_body.h"
#include "fp16_dw_body.h"

const arm_fkernels arm_fkernels_fp16 = {"fp16", MR, NR, 2, 4, pack_a_impl, pack_b_impl, im2col_b_impl,
                                        gemm_driver, depthwise_impl};
