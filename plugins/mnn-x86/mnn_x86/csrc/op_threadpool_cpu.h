/* op_threadpool_cpu.c: moving a pool worker off its caller's CPU (op_threadpool.c, "beside the caller") */
#ifndef MNN_X86_OP_THREADPOOL_CPU_H
#define MNN_X86_OP_THREADPOOL_CPU_H

#include <stdint.h>

/* Called by a pool worker on itself, on CPU `cpu` (its caller's): moves it to another CPU of its affinity
 * and returns 1, or returns 0 where it may run nowhere else, where `only_if_spare` and the machine has no
 * core to spare, or on no Linux. Its affinity is as before. */
int x86_pool_move_off(int cpu, int only_if_spare);
/* for MNN_X86_POOL_TRACE: how many moves this process made (refused 0), or refused for want of a spare core (1) */
int64_t x86_pool_moves(int refused);

#endif
