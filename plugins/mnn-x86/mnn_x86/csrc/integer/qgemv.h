/* The one-row form of the u8 x s8 tile (qgemm.h): a row of L against a tile of R, for products with a
 * single row such as a recurrent layer's per-step h · R^T, where x86_qgemm_tile would run its X86_QG_MR
 * rows for one. The same operands, layouts and zero-point algebra as the tile. */
#ifndef MNN_X86_INTEGER_QGEMV_H
#define MNN_X86_INTEGER_QGEMV_H

#include "integer/qgemm.h"

/* c[n] for columns n < nr (<= X86_QG_NR) of the tile starting at r: the exact (L - zl)(R - zr) of the row l
 * (K4 words), u its sum minus K * zl; zr, rsum: the tile's columns (rsum NULL where zl is 0) */
void x86_qgemv_tile(const x86_qgemm *g, const int32_t *l, int32_t u, int32_t zl, const uint8_t *r, const int32_t *zr,
                    const int32_t *rsum, int64_t nr, int32_t *c);

#endif
