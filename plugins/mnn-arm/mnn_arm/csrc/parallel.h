/* mnn-arm's threads: one process-wide pool of pthreads (made on first use) that runs a range of
 * work split into contiguous parts. Every kernel splits on boundaries its serial code already has
 * (GEMM tiles, whole planes, whole rows, vector-aligned runs), so an output element is computed by
 * the same instructions on any thread count: results are identical to one thread's. */
#ifndef MNN_ARM_PARALLEL_H
#define MNN_ARM_PARALLEL_H

#include <stdint.h>

#define ARM_MAX_THREADS 64

/* run parts [begin, end) of a range; tid < the part count (which scratch slice a part may use) */
typedef void (*arm_range_fn)(void *ctx, int64_t begin, int64_t end, int tid);

/* The number of parts [0, n) is cut into for `threads` threads when every part but the last is a
 * multiple of `grain`: min(threads, ceil(n / grain)), at least 1. */
int arm_parts(int threads, int64_t n, int64_t grain);

/* fn over [0, n) in arm_parts(threads, n, grain) contiguous parts of equal size (rounded up to grain),
 * the caller running part 0 and waiting for the rest. One parallel region runs at a time in the
 * process: a call made while another runs (from another session's thread, or from inside a part)
 * runs its parts one after another on the calling thread, with the same split. */
void arm_parallel(int threads, int64_t n, int64_t grain, arm_range_fn fn, void *ctx);

/* worker threads started so far (the caller of a region is not one) */
int arm_pool_workers(void);

#endif
