/* inference (x86infer): a small claim-based thread pool for the coarse
 * parallel loops (GEMM blocks, convolution chunks, depthwise planes).
 *
 * Why not an OpenMP region: a region ends with a barrier that waits for
 * every thread of the team, so on a machine shared with other processes a
 * team thread that is not scheduled holds the caller up for a whole time
 * slice, once per layer. Here items are claimed one by one; the caller
 * claims too, and waits only for items a worker has actually claimed. A
 * worker that never wakes costs nothing: the caller does its share.
 *
 * Each participant owns a contiguous part of the items and claims from it
 * first, then from the others' parts. Owning a part keeps the same data on
 * the same core: from one run to the next, and from one op to the next where
 * both cut the pixels the same way (a 1x1 convolution's GEMM blocks, say).
 * With one shared counter, items went to whichever thread came first, and
 * a layer's output was often read by the other core: on the H200 host's Xeon
 * a 16->64 1x1 convolution on 55x55 ran 0.86x the time at 2 threads and 0.53x
 * at 4 with owned parts (benchmarks/RESULTS.md, "6x32 tile").
 *
 * One job at a time: a caller that finds the pool busy (another session on
 * another Python thread) runs its items itself. Workers spin briefly for the
 * next job, then sleep on a condition variable. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "x86.h"

#define POOL_MAX 64
/* How long a worker polls for the next job before it sleeps. A sleeping worker costs the next job
 * its wake-up: 20-50 us in a VM (an IPI to a halted vCPU), which is what a whole SqueezeNet layer
 * takes at two threads. Timed, not counted: a PAUSE's length differs by CPU several-fold. 2 ms keeps
 * workers awake between the layers of a run and between back-to-back runs (ONNX Runtime's pool
 * also spins by default). The cost: after a session's last run a worker burns up to 2 ms of CPU. */
#define POOL_SPIN_NS 2000000

typedef struct {
    _Alignas(64) _Atomic int64_t next; /* its next unclaimed item; a cache line each */
    int64_t end;
} pool_part;

typedef struct {
    x86_task_fn fn;
    void *ctx;
    int want; /* workers with id < want may join (the caller is id 0); also the number of parts */
    _Atomic int64_t done;
    pool_part part[POOL_MAX]; /* part r: items [n*r/want, n*(r+1)/want), owned by participant r */
} pool_job;

static struct {
    pthread_mutex_t mu, busy;
    pthread_cond_t cv;
    int started;                 /* worker threads created (ids 1..started) */
    _Atomic(pool_job *) job;     /* the job on offer, or NULL */
    _Atomic uint64_t gen;        /* bumped at each new job */
    _Atomic int inside;          /* workers between entering and leaving a job */
    _Atomic int sleepers;
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, 0, 0, 0};

static inline void pause_cpu(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* its own part first, then what is left of the others' */
static void run_items(pool_job *j, int worker) {
    for (int r = 0; r < j->want; ++r) {
        pool_part *p = &j->part[(worker + r) % j->want];
        for (;;) {
            const int64_t i = atomic_fetch_add(&p->next, 1);
            if (i >= p->end) break;
            j->fn(j->ctx, i, worker);
            atomic_fetch_add(&j->done, 1);
        }
    }
}

static void *worker_main(void *arg) {
    const int id = (int)(intptr_t)arg;
    uint64_t seen = atomic_load(&P.gen);
    for (;;) {
        const int64_t since = now_ns();
        for (int polls = 1; atomic_load(&P.gen) == seen; ++polls) {
            if (polls % 64 || now_ns() - since < POOL_SPIN_NS) { /* the clock read every 64 polls */
                pause_cpu();
                continue;
            }
            pthread_mutex_lock(&P.mu);
            atomic_fetch_add(&P.sleepers, 1);
            while (atomic_load(&P.gen) == seen) pthread_cond_wait(&P.cv, &P.mu);
            atomic_fetch_sub(&P.sleepers, 1);
            pthread_mutex_unlock(&P.mu);
        }
        seen = atomic_load(&P.gen);
        /* enter, then check the job is still on offer: the caller withdraws it
         * before waiting for `inside` to drain, so it never outlives a reader */
        atomic_fetch_add(&P.inside, 1);
        pool_job *j = atomic_load(&P.job);
        if (j && id < j->want) run_items(j, id);
        atomic_fetch_sub(&P.inside, 1);
    }
    return NULL;
}

volatile int x86_omp_usable = 1, x86_omp_started = 0; /* x86.h: X86_OMP */

static void reset_after_fork(void) { /* the child has no workers, and libgomp's team is gone */
    if (x86_omp_started) x86_omp_usable = 0;
    pthread_mutex_init(&P.mu, NULL);
    pthread_mutex_init(&P.busy, NULL);
    pthread_cond_init(&P.cv, NULL);
    P.started = 0;
    atomic_store(&P.job, NULL);
    atomic_store(&P.inside, 0);
    atomic_store(&P.sleepers, 0);
}

/* at load: the handler must run in a child even when this process only ever ran OpenMP regions */
__attribute__((constructor)) static void register_fork_handler(void) { pthread_atfork(NULL, NULL, reset_after_fork); }

static void grow(int workers) {
    while (P.started < workers && P.started < POOL_MAX - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        const int ok = pthread_create(&t, &attr, worker_main, (void *)(intptr_t)(P.started + 1)) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        P.started++;
    }
}

void x86_parallel(int threads, int64_t n, x86_task_fn fn, void *ctx) {
    if (n <= 0) return;
    if (threads > POOL_MAX) threads = POOL_MAX;
    if (threads <= 1 || n == 1 || pthread_mutex_trylock(&P.busy) != 0) {
        for (int64_t i = 0; i < n; ++i) fn(ctx, i, 0);
        return;
    }
    grow(threads - 1);
    pool_job j;
    j.fn = fn;
    j.ctx = ctx;
    j.want = threads < P.started + 1 ? threads : P.started + 1;
    atomic_store(&j.done, 0);
    for (int r = 0; r < j.want; ++r) {
        atomic_store(&j.part[r].next, n * r / j.want);
        j.part[r].end = n * (r + 1) / j.want;
    }
    atomic_store(&P.job, &j);
    atomic_fetch_add(&P.gen, 1);
    if (atomic_load(&P.sleepers) > 0) {
        pthread_mutex_lock(&P.mu);
        pthread_cond_broadcast(&P.cv);
        pthread_mutex_unlock(&P.mu);
    }
    run_items(&j, 0);
    atomic_store(&P.job, NULL); /* withdrawn: late workers see NULL */
    for (int spins = 0; atomic_load(&j.done) < n || atomic_load(&P.inside) > 0;) /* claimed items finish */
        if (++spins < 2000) pause_cpu();
        else sched_yield();
    pthread_mutex_unlock(&P.busy);
}

/* x86_parallel_ranges: the ranges as x86_parallel items */
typedef struct {
    x86_range_fn fn;
    void *ctx;
    int64_t n, per;
} range_job;

static void range_task(void *ctx, int64_t item, int worker) {
    const range_job *r = (const range_job *)ctx;
    const int64_t lo = item * r->per, hi = lo + r->per < r->n ? lo + r->per : r->n;
    r->fn(r->ctx, lo, hi, worker);
}

void x86_parallel_ranges(int threads, int64_t n, int64_t grain, x86_range_fn fn, void *ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t items = n / grain;
    if (items > X86_ITEMS_PER_THREAD * (int64_t)threads) /* a few each: claiming evens out preemption */
        items = X86_ITEMS_PER_THREAD * (int64_t)threads;
    if (threads <= 1 || items < 2) {
        fn(ctx, 0, n, 0);
        return;
    }
    range_job r = {fn, ctx, n, (n + items - 1) / items};
    x86_parallel(threads, (n + r.per - 1) / r.per, range_task, &r);
}

const x86_pool_api x86_pool_functions = {x86_parallel, x86_parallel_ranges};
