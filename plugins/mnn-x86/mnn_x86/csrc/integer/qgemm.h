/* The u8 x s8 product of the integer ops (integer.h): exact int32, accumulated vertically (one output per
 * int32 lane, no horizontal sums). Both operands hold words of 4 bytes consecutive along K:
 *   L, the broadcast side: rows of K4 words, a register tile of X86_QG_MR rows (rows past M zero words);
 *   R, the vector side: column n of word k4 at r + roff[k4] + 4 * n (a packed panel of X86_QG_NR columns,
 *   or a convolution's channel-quad plane read at each tap's offset), X86_QG_NR columns readable.
 * Whichever side holds int8 data holds it as int8 and the other as uint8 (an operand of the other type is
 * shifted by 128, its zero point with it), so
 *   (L - zl)(R - zr) summed over K = acc - zr[n] * u[m] - zl[m] * rsum[n],  u[m] = lsum[m] - K * zl[m]
 * with acc = sum L * R (vpdpbusd on AVX-512 VNNI; on AVX2 vpmaddubsw with the uint8 side split into its low
 * 7 bits and its top bit, so the int16 pair sums cannot saturate, then vpmaddwd) and rsum[n] the column's
 * sum of R. Wrapping int32 arithmetic, as the reference's. */
#ifndef MNN_X86_INTEGER_QGEMM_H
#define MNN_X86_INTEGER_QGEMM_H

#include <stdint.h>

enum { X86_QG_NR = 64, X86_QG_MR = 6 };
enum { X86_QG_SCALAR = 0, X86_QG_AVX2 = 1, X86_QG_VNNI = 2 };

typedef struct {
    int32_t path;         /* X86_QG_*: x86_qgemm_path */
    int32_t l_unsigned;   /* L holds uint8 and R int8 (else L int8 and R uint8) */
    int64_t K4;           /* words along K */
    const int64_t *roff;  /* [K4] byte offsets of R's words from the tile's base */
} x86_qgemm;

/* the widest path at ISA level `level` (0 scalar, 1 AVX2, 2 AVX-512) that this CPU runs */
int x86_qgemm_path(int level);

/* c[i * ldc + n] for rows i < mr (<= X86_QG_MR) of the tile starting at l, columns n < nr (<= X86_QG_NR) of
 * the tile starting at r: the exact (L - zl)(R - zr) of the header. u, zl: the tile's rows; zr: its
 * columns; rsum: its columns, or NULL where zl is 0 on every row. */
void x86_qgemm_tile(const x86_qgemm *g, const int32_t *l, const int32_t *u, const int32_t *zl, int64_t mr,
                    const uint8_t *r, const int32_t *zr, const int32_t *rsum, int64_t nr, int32_t *c, int64_t ldc);

/* rsum[n] = sum over k4 and the 4 bytes of the tile's column n (R read as l_unsigned says), n < X86_QG_NR */
void x86_qgemm_rsum(const x86_qgemm *g, const uint8_t *r, int32_t *rsum);

#endif
