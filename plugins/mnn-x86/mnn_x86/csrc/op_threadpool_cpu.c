/* inference (x86infer): a pool worker that finds itself on its caller's CPU moves to another.
 *
 * The kernel wakes a task on the CPU it last ran on, or beside its waker, unless its idle scan finds an
 * idle CPU; that scan shrinks to nothing while the cache domain was busy lately (both cores, the caller
 * and a spinning worker). A worker that ran on the caller's CPU once was then woken there again and
 * again, where it can only take the caller's turn (op_threadpool.c passes such a worker over, and
 * doubles the pause each time): a fresh process at threads=2 on two idle cores ran most of its jobs on
 * the caller alone. Moved off, the worker's last CPU is another one, and that is where it is woken.
 *
 * Only while the machine has a core to spare (no more threads runnable than CPUs, /proc/loadavg's count
 * at that moment): on a busy machine the other CPU runs someone else, a moved worker is judged on its
 * lateness there, comes back, and the jobs it joins are held up by its lost turns; staying beside the
 * caller, it is passed over for ever longer pauses, which is what a busy machine wants. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#endif
#include "op_threadpool_cpu.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <fcntl.h>
#include <unistd.h>
#endif

static _Atomic int64_t moves[2]; /* made, refused (no core to spare) */

#ifdef __linux__
/* whether no more threads are runnable on the machine than it has CPUs (ours included); unknown: no */
static int core_to_spare(void) {
    char text[128];
    const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC); /* "0.52 0.58 0.59 3/161 20856" */
    const ssize_t got = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0) close(fd);
    if (got <= 0) return 0;
    text[got] = 0;
    const char *p = text;
    for (int fields = 0; fields < 3 && p; ++fields) p = strchr(p + 1, ' ');
    return p && atoi(p + 1) > 0 && atoi(p + 1) <= sysconf(_SC_NPROCESSORS_ONLN);
}
#endif

int x86_pool_move_off(int cpu, int only_if_spare) {
#ifdef __linux__
    /* the kernel migrates a running thread out of its new mask before the call returns; put back, the mask
     * moves nothing */
    cpu_set_t all, others;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof all, &all) != 0) return 0;
    if (!CPU_ISSET(cpu, &all) || CPU_COUNT(&all) < 2) return 0;
    if (only_if_spare && !core_to_spare()) {
        atomic_fetch_add(&moves[1], 1);
        return 0;
    }
    others = all;
    CPU_CLR(cpu, &others);
    if (sched_setaffinity(0, sizeof others, &others) != 0) return 0;
    sched_setaffinity(0, sizeof all, &all);
    atomic_fetch_add(&moves[0], 1);
    return 1;
#else
    (void)cpu, (void)only_if_spare;
    return 0;
#endif
}

int64_t x86_pool_moves(int refused) { return atomic_load(&moves[refused != 0]); }
