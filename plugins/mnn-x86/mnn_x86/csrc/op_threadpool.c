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
 * next job, then sleep (a futex on Linux: the caller wakes them without a lock
 * that a descheduled worker could hold).
 *
 * Small jobs. A hand-off costs a few microseconds (the job's cache lines, the
 * worker's output read back), a wake-up more: a job the caller does in less
 * runs on it alone. The pool remembers each loop's last serial time by its
 * task and item count; a loop it has not timed yet, or timed small, runs its
 * first item on the caller before the job is offered (a decoder step's GEMVs
 * take a few microseconds each).
 *
 * Starved workers. Claiming spares the caller a worker that never wakes, not
 * one the OS takes off its core in the middle of an item: the caller then waits
 * for that item through the other processes' time slices, at every layer. So
 * the caller keeps score: for each job, the time it took against the time its
 * items would have taken on the caller alone (its own items' time, scaled to
 * all n). Over a window of jobs, where threads did not bring the time well
 * below that estimate, the pool runs jobs on the caller alone for a while
 * (OpenMP regions too: x86_pool_starved), its workers asleep, then tries the
 * workers again; the pause doubles while they keep failing.
 *
 * Each loop is judged on its own as well (by task and item count, beside its
 * serial time): where its last job on the workers did not come under the same
 * share of its serial estimate, its next calls run on the caller alone, one,
 * then two, up to LOOP_BACKOFF_MAX while tries keep failing. A window mixes
 * loops that pay with loops that never do (a decoder's 10-20 us GEMMs, whose
 * hand-offs eat the gain even on a quiet machine); per loop, those run alone
 * while the large ones keep their threads.
 *
 * Waiting. After its own items the caller waits for the items workers have
 * claimed; where one of them lost its core that is a time slice of another
 * process. Spinning or yielding through it spends the caller's own share of
 * the CPU, which the serial ops after the job then lack: past a short spin,
 * the caller sleeps on a futex that the worker finishing the last item wakes.
 *
 * Workers that cannot come. Under contention most jobs that miss their gain are not held up by a
 * worker; the worker simply was not on a core when the job was offered (woken onto a core where other
 * processes run, or onto the caller's own core, where it can only take the caller's turn), and the
 * caller ran every item after paying the offer and the wake-up. So the caller notes, per worker and
 * per job, whether the worker came, how late, and on which CPU: one that did not come within
 * POOL_LATE_NS, or came on the caller's CPU, is passed over for its next jobs (its part goes to
 * the caller, and it is not woken) for a pause that doubles while it keeps failing; a worker that
 * finds itself on the caller's CPU moves to another while the machine has a core to spare (else it sleeps
 * at once): the kernel wakes it where it last ran (op_threadpool_cpu.c). The items stay those of `threads`,
 * whoever runs them: a kernel's floats may depend on where its ranges end (vector tails), never on timing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu */
#endif
#include <pthread.h>
#include <sched.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "op_threadpool_cpu.h"
#include "x86.h"

#define POOL_MAX 64
/* How long a worker polls for the next job before it sleeps. A sleeping worker costs the next job
 * its wake-up: 20-50 us in a VM (an IPI to a halted vCPU), which is what a whole SqueezeNet layer
 * takes at two threads. Timed, not counted: a PAUSE's length differs by CPU several-fold. 2 ms keeps
 * workers awake between the layers of a run and between back-to-back runs (ONNX Runtime's pool
 * also spins by default). The cost: after a session's last run a worker burns up to 2 ms of CPU. */
#define POOL_SPIN_NS 2000000
/* A spinning worker that finds a gap of POOL_PREEMPTED_NS between two of its clock reads lost its core:
 * the cores are oversubscribed, and its spinning takes time from threads with work, the caller's serial
 * ops among them (a reference op of a few ms between two parallel jobs ran up to 2x slower beside a
 * worker spinning out its 2 ms). Workers then spin only POOL_SPIN_BUSY_NS, for POOL_BUSY_HOLD_NS. */
#define POOL_PREEMPTED_NS 200000
#define POOL_SPIN_BUSY_NS 20000
#define POOL_BUSY_HOLD_NS 100000000
/* A job whose serial time is below this runs on the caller alone (the header's "small jobs"). */
#define POOL_SMALL_JOB_NS 8000
/* the loops' records (seen_jobs), a direct-mapped table */
#define POOL_SEEN 256
/* the most calls a loop whose threads did not pay sits out before it tries them again (the header's
 * "each loop"): a few percent of its calls at most, where tries keep failing */
#define LOOP_BACKOFF_MAX 64
/* how long the caller spins for claimed items before it sleeps ("waiting"): a worker in the middle of its
 * item finishes in a few microseconds; one that lost its core, in milliseconds */
#define POOL_WAIT_SPIN_NS 30000
/* A worker that enters a job this long after its offer, or not at all in a job that lasted as long, was
 * off its core ("workers that cannot come"); the pause it is then passed over for, from the shortest to
 * the longest, doubling while it keeps failing: a try costs at most a wake-up and a job on one thread */
#define POOL_LATE_NS 200000
#define POOL_SHUN_MIN_NS 1000000
#define POOL_SHUN_MAX_NS 256000000

typedef struct {
    _Alignas(64) _Atomic int64_t next; /* its next unclaimed item; a cache line each */
    int64_t end;
} pool_part;

typedef struct {
    x86_task_fn fn;
    void *ctx;
    int want; /* workers with id < want may join (the caller is id 0); also the number of parts */
    int64_t n;
    _Atomic int64_t done;
    _Atomic uint32_t finished; /* set by the worker that finishes the last item: the futex word of a sleeping caller */
    _Atomic int caller_asleep;
    pool_part part[POOL_MAX]; /* part r: items [n*r/want, n*(r+1)/want), owned by participant r */
} pool_job;

/* a worker's presence: written by the worker (cpu, entered), judged by the caller under P.busy (the rest) */
typedef struct {
    _Alignas(64) _Atomic uint32_t bell; /* its futex word: the caller rings it to offer a job to a sleeper */
    _Atomic int asleep;                 /* set by the worker, cleared by the caller that rings */
    _Atomic uint32_t entered;           /* the P.gen of the last job it entered */
    _Atomic int64_t entered_at;         /* now_ns() at that entry */
    _Atomic int entered_cpu;            /* and its CPU then */
    _Atomic int64_t shunned_until;      /* now_ns() before which it is passed over */
    int64_t shun;                       /* its next pause, if it fails again */
} pool_worker;
static pool_worker W[POOL_MAX];

static struct {
    pthread_mutex_t mu, busy;
    pthread_cond_t cv;
    int started;                 /* worker threads created (ids 1..started) */
    _Atomic(pool_job *) job;     /* the job on offer, or NULL */
    _Atomic uint32_t gen;        /* bumped at each new job */
    _Atomic int inside;          /* workers between entering and leaving a job */
    _Atomic int64_t oversubscribed_until; /* now_ns() before which workers spin POOL_SPIN_BUSY_NS */
    _Atomic int caller_cpu;               /* the CPU of the last job's caller: a worker spinning there sleeps */
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, 0, 0, 0, -1};

/* Contention (the header's "starved workers"): a verdict per window of POOL_WINDOW_NS of parallel jobs;
 * the threads pass when the jobs took at most POOL_GAIN of the serial estimate (two threads reach about
 * 0.55 where they pay on a quiet machine); else jobs run on the caller alone for the backoff, which starts
 * at POOL_BACKOFF_MIN_NS and doubles on each failed window up to POOL_BACKOFF_MAX_NS. The window is short
 * so that a failed try costs little; the longest pause keeps tries a few percent of the time. The window in which
 * workers start sets no verdict: a short run of a fresh process would otherwise judge the threads' start. */
#define POOL_WINDOW_NS 10000000
#define POOL_GAIN 0.9
#define POOL_BACKOFF_MIN_NS 20000000
#define POOL_BACKOFF_MAX_NS 640000000

static struct { /* read and written by the caller holding P.busy, except serial_until (and `on`, set before
                * the first worker starts) */
    int on; /* MNN_X86_POOL_ADAPT, bits: 1 the verdicts, 2 the short spins, 4 the loops' verdicts, 8 the caller's
             * sleep while it waits, 16 workers that cannot come passed over, 32 a worker on the caller's CPU moves
             * off it while a core is spare, 64 even when none is (tests); default 63 (0: none, to compare) */
    _Atomic int64_t serial_until; /* now_ns() before which jobs run on the caller alone */
    int64_t backoff, wall, estimate; /* the window so far: the jobs' time and their serial estimate */
    int unjudged; /* workers started in this window: their first jobs pay the threads' start and first touches */
    int64_t jobs, solo_jobs, small_jobs, windows, failed; /* MNN_X86_POOL_TRACE=1 prints these at exit */
    int64_t loop_solo_jobs, loop_failed, passive_waits;
    int64_t late, beside_caller, passed_over_jobs; /* workers found late, or on the caller's CPU; jobs not offered */
} A = {.on = -1, .backoff = POOL_BACKOFF_MIN_NS};

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

/* a worker: sleep until the caller rings its bell (a worker passed over sleeps through the jobs it is
 * not offered). The worker marks itself asleep, then checks P.gen; the caller bumps gen, then rings the
 * sleepers it offers the job to: one of the two sees the other. */
static void sleep_until_job(int id, uint32_t seen) {
    pool_worker *w = &W[id];
    atomic_store(&w->asleep, 1);
    if (atomic_load(&P.gen) == seen) {
#ifdef __linux__
        for (;;) {
            const uint32_t bell = atomic_load(&w->bell);
            if (!atomic_load(&w->asleep)) break;
            syscall(SYS_futex, &w->bell, FUTEX_WAIT_PRIVATE, bell, NULL, NULL, 0);
        }
#else
        pthread_mutex_lock(&P.mu);
        while (atomic_load(&w->asleep)) pthread_cond_wait(&P.cv, &P.mu);
        pthread_mutex_unlock(&P.mu);
#endif
    }
    atomic_store(&w->asleep, 0);
}

/* the caller, after bumping P.gen: wake worker `id` if it sleeps */
static void ring(int id) {
    pool_worker *w = &W[id];
    if (!atomic_load(&w->asleep)) return;
    atomic_store(&w->asleep, 0);
    atomic_fetch_add(&w->bell, 1);
#ifdef __linux__
    syscall(SYS_futex, &w->bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
#else
    pthread_mutex_lock(&P.mu);
    pthread_cond_broadcast(&P.cv);
    pthread_mutex_unlock(&P.mu);
#endif
}

/* a worker that finished a job's last item: the caller may sleep on `finished` ("waiting"). The caller sets
 * caller_asleep, then checks done; the worker counts done, then checks caller_asleep: one sees the other. */
static void wake_caller(pool_job *j) {
    atomic_store(&j->finished, 1);
#ifdef __linux__
    if (atomic_load(&j->caller_asleep)) syscall(SYS_futex, &j->finished, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
#endif
}

/* the caller, after its own items: until the workers' claimed items are done, spinning briefly, then asleep
 * where ADAPT bit 8 allows (a timed sleep: a late wake costs a millisecond, not a hang) */
static void wait_for_items(pool_job *j, int passive) {
    const int64_t since = now_ns();
    for (int spins = 0; atomic_load(&j->done) < j->n;) {
        if (++spins < 2000) {
            pause_cpu();
            continue;
        }
#ifdef __linux__
        if (passive && now_ns() - since > POOL_WAIT_SPIN_NS) {
            atomic_store(&j->caller_asleep, 1);
            if (atomic_load(&j->done) < j->n) {
                const struct timespec ms = {0, 1000000};
                syscall(SYS_futex, &j->finished, FUTEX_WAIT_PRIVATE, 0, &ms, NULL, 0);
                A.passive_waits++;
            }
            continue;
        }
#endif
        sched_yield();
    }
}

/* its own part first, then what is left of the others'; returns how many items it ran */
static int64_t run_items(pool_job *j, int worker) {
    int64_t ran = 0;
    for (int r = 0; r < j->want; ++r) {
        pool_part *p = &j->part[(worker + r) % j->want];
        for (;;) {
            const int64_t i = atomic_fetch_add(&p->next, 1);
            if (i >= p->end) break;
            j->fn(j->ctx, i, worker);
            ++ran;
            if (atomic_fetch_add(&j->done, 1) + 1 == j->n && worker != 0) wake_caller(j);
        }
    }
    return ran;
}

/* whether a worker is on the caller's CPU, where it takes the caller's turn; it first tries to move to
 * another (ADAPT bit 32, once per wait) */
static int beside_caller(int *may_move) {
    const int cpu = atomic_load(&P.caller_cpu);
    if (!(A.on & 16) || sched_getcpu() != cpu) return 0;
    if (!(A.on & 32) || !*may_move) return 1;
    *may_move = 0;
    return !x86_pool_move_off(cpu, !(A.on & 64));
}

static void *worker_main(void *arg) {
    const int id = (int)(intptr_t)arg;
    uint32_t seen = atomic_load(&P.gen);
    for (;;) {
        const int64_t since = now_ns();
        int64_t last = since, spin = since < atomic_load(&P.oversubscribed_until) ? POOL_SPIN_BUSY_NS : POOL_SPIN_NS;
        int may_move = 1;
        for (int polls = 1; atomic_load(&P.gen) == seen; ++polls) {
            if (polls % 64) { /* the clock read every 64 polls */
                pause_cpu();
                continue;
            }
            const int64_t t = now_ns();
            if (t - last > POOL_PREEMPTED_NS && (A.on & 2)) {
                atomic_store(&P.oversubscribed_until, t + POOL_BUSY_HOLD_NS);
                spin = POOL_SPIN_BUSY_NS;
            }
            last = t;
            if (t - since < spin && !beside_caller(&may_move)) {
                pause_cpu();
                continue;
            }
            sleep_until_job(id, seen);
        }
        seen = atomic_load(&P.gen);
        may_move = 1;
        beside_caller(&may_move); /* woken there: moves first, if it may */
        /* enter, then check the job is still on offer: the caller withdraws it
         * before waiting for `inside` to drain, so it never outlives a reader */
        atomic_fetch_add(&P.inside, 1);
        atomic_store(&W[id].entered_cpu, sched_getcpu());
        atomic_store(&W[id].entered_at, now_ns());
        atomic_store(&W[id].entered, seen);
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
    memset(W, 0, sizeof W);
    atomic_store(&A.serial_until, 0);
    atomic_store(&P.oversubscribed_until, 0);
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
        A.unjudged = 1;
    }
}

static double pool_gain = POOL_GAIN; /* MNN_X86_POOL_GAIN overrides it, to tune */
static int64_t pool_small_ns = POOL_SMALL_JOB_NS; /* MNN_X86_POOL_SMALL_US (0: every job offered, as before) */
static int64_t pool_late_ns = POOL_LATE_NS;        /* MNN_X86_POOL_LATE_US overrides it, to tune */
static void print_trace(void) {
    fprintf(stderr, "mnn-x86 pool: %lld parallel jobs, %lld on the caller alone (starved), %lld small, ",
            (long long)A.jobs, (long long)A.solo_jobs, (long long)A.small_jobs);
    fprintf(stderr, "%lld windows, %lld failed, ", (long long)A.windows, (long long)A.failed);
    fprintf(stderr, "%lld loop verdicts failed, %lld on the caller alone (loop), %lld waits asleep, ",
            (long long)A.loop_failed, (long long)A.loop_solo_jobs, (long long)A.passive_waits);
    fprintf(stderr, "%lld workers late, %lld beside the caller, %lld with no worker coming, ", (long long)A.late,
            (long long)A.beside_caller, (long long)A.passed_over_jobs);
    fprintf(stderr, "%lld moved off the caller's CPU, %lld stayed (no core to spare)\n",
            (long long)x86_pool_moves(0), (long long)x86_pool_moves(1));
}

/* under P.busy, before a job: whether it runs on the caller alone */
static int starved_now(void) {
    if (A.on < 0) {
        const char *e = getenv("MNN_X86_POOL_ADAPT"), *t = getenv("MNN_X86_POOL_TRACE");
        A.on = e ? atoi(e) : 63;
        if (getenv("MNN_X86_POOL_GAIN")) pool_gain = atof(getenv("MNN_X86_POOL_GAIN"));
        if (getenv("MNN_X86_POOL_SMALL_US")) pool_small_ns = (int64_t)(1000 * atof(getenv("MNN_X86_POOL_SMALL_US")));
        if (getenv("MNN_X86_POOL_LATE_US")) pool_late_ns = (int64_t)(1000 * atof(getenv("MNN_X86_POOL_LATE_US")));
        if (t && t[0] == '1') atexit(print_trace);
    }
    return (A.on & 1) && now_ns() < atomic_load_explicit(&A.serial_until, memory_order_relaxed);
}

/* under P.busy, after a job's offered items took `wall` against `estimate` on the caller alone */
static void keep_score(int64_t wall, int64_t estimate) {
    A.jobs++;
    A.wall += wall;
    A.estimate += estimate;
    if (A.wall < POOL_WINDOW_NS) return;
    A.windows++;
    if (A.unjudged) {
        A.unjudged = 0;
    } else if ((double)A.wall > pool_gain * (double)A.estimate) {
        A.failed++;
        atomic_store_explicit(&A.serial_until, now_ns() + A.backoff, memory_order_relaxed);
        A.backoff = A.backoff * 2 < POOL_BACKOFF_MAX_NS ? A.backoff * 2 : POOL_BACKOFF_MAX_NS;
    } else {
        A.backoff = POOL_BACKOFF_MIN_NS;
    }
    A.wall = A.estimate = 0;
}

int x86_pool_starved(void) {
    const int64_t until = atomic_load_explicit(&A.serial_until, memory_order_relaxed);
    return until != 0 && (A.on & 1) && now_ns() < until;
}

/* A loop's record, by its task and item count (the caller holds P.busy). Loops that share a task and a
 * count but not a size share a record: a large one then runs its first item before the job is offered,
 * a small one is offered, and a verdict on one applies to the other; each costs at most a job's gain. */
typedef struct {
    const void *task;
    int64_t n;
    int64_t ns;        /* its last serial time; 0: not timed, its first item tells */
    int32_t solo_left; /* its next calls that run on the caller alone (the header's "each loop") */
    int32_t backoff;   /* the calls it sits out after its next failed try */
} loop_record;
static loop_record seen_jobs[POOL_SEEN];

static loop_record *seen_loop(const void *task, int64_t n) {
    const uint64_t h = ((uint64_t)(uintptr_t)task >> 4) * 0x9E3779B97F4A7C15ull ^ (uint64_t)n * 0xC2B2AE3D27D4EB4Full;
    loop_record *l = &seen_jobs[(size_t)(h >> 56) % POOL_SEEN];
    if (l->task != task || l->n != n) *l = (loop_record){task, n, 0, 0, 1};
    return l;
}

/* a loop's job on the workers took `wall` against `estimate` on the caller alone: whether it sits out
 * its next calls */
static void judge_loop(loop_record *l, int64_t wall, int64_t estimate) {
    if (!(A.on & 4) || A.unjudged) return;
    if ((double)wall > pool_gain * (double)estimate) {
        A.loop_failed++;
        l->solo_left = l->backoff;
        l->backoff = l->backoff * 2 < LOOP_BACKOFF_MAX ? l->backoff * 2 : LOOP_BACKOFF_MAX;
    } else {
        l->backoff = 1;
    }
}

/* whether worker `id` is passed over now (the header's "workers that cannot come") */
static int passed_over(int id, int64_t now) {
    return (A.on & 16) && now < atomic_load_explicit(&W[id].shunned_until, memory_order_relaxed);
}

/* under P.busy, after job `gen`, offered at `offered_at` by a caller on `caller_cpu` to workers 1..want-1:
 * a worker offered the job that came late, not at all while the job lasted POOL_LATE_NS, or on the
 * caller's CPU, is passed over for a while; one that came in time, on another CPU, is offered the next */
static void judge_workers(uint32_t gen, int want, int64_t offered_at, int caller_cpu) {
    if (!(A.on & 16) || A.unjudged) return;
    const int64_t now = now_ns();
    for (int id = 1; id < want; ++id) {
        pool_worker *w = &W[id];
        const int came = atomic_load(&w->entered) == gen, offered = !passed_over(id, offered_at);
        const int64_t delay = came ? atomic_load(&w->entered_at) - offered_at : now - offered_at;
        const int beside = came && atomic_load(&w->entered_cpu) == caller_cpu;
        if (beside || delay > pool_late_ns) {
            if (!offered) continue; /* not asked: no news */
            A.late += !beside;
            A.beside_caller += beside;
            const int64_t shun = w->shun > 0 ? w->shun : POOL_SHUN_MIN_NS;
            atomic_store_explicit(&w->shunned_until, now + shun, memory_order_relaxed);
            w->shun = shun * 2 < POOL_SHUN_MAX_NS ? shun * 2 : POOL_SHUN_MAX_NS;
        } else if (came) {
            atomic_store_explicit(&w->shunned_until, 0, memory_order_relaxed);
            w->shun = POOL_SHUN_MIN_NS;
        }
    }
}

static void run_serial(int64_t from, int64_t n, x86_task_fn fn, void *ctx) {
    for (int64_t i = from; i < n; ++i) fn(ctx, i, 0);
}

/* x86_parallel, with the loop's key for seen_ns (a range loop's own function, not range_task) */
static void parallel_as(const void *task, int threads, int64_t n, x86_task_fn fn, void *ctx) {
    if (n <= 0) return;
    if (threads > POOL_MAX) threads = POOL_MAX;
    if (threads <= 1 || n == 1 || pthread_mutex_trylock(&P.busy) != 0) {
        run_serial(0, n, fn, ctx);
        return;
    }
    if (starved_now()) {
        A.solo_jobs++;
        pthread_mutex_unlock(&P.busy);
        run_serial(0, n, fn, ctx);
        return;
    }
    loop_record *loop = seen_loop(task, n);
    const int64_t t0 = now_ns();
    int64_t probed = 0, probe_ns = 0;
    if (loop->ns < pool_small_ns) { /* small or not timed: its first item on the caller says which */
        fn(ctx, 0, 0);
        probed = 1;
        probe_ns = now_ns() - t0;
        if (probe_ns * n < pool_small_ns || n == 2) { /* (one item left: the workers could only take it over) */
            run_serial(1, n, fn, ctx);
            loop->ns = now_ns() - t0;
            A.small_jobs++;
            pthread_mutex_unlock(&P.busy);
            return;
        }
    }
    if (loop->solo_left > 0) { /* its threads did not pay lately */
        loop->solo_left--;
        run_serial(probed, n, fn, ctx);
        loop->ns = now_ns() - t0;
        A.loop_solo_jobs++;
        pthread_mutex_unlock(&P.busy);
        return;
    }
    const int64_t t_offer = now_ns();
    grow(threads - 1);
    pool_job j;
    j.fn = fn;
    j.ctx = ctx;
    j.want = threads < P.started + 1 ? threads : P.started + 1;
    j.n = n;
    atomic_store(&j.finished, 0);
    atomic_store(&j.caller_asleep, 0);
    if (j.want > n) j.want = (int)n; /* no empty part: item 0 is part 0's, which the probe took */
    int coming = 0;
    for (int id = 1; id < j.want; ++id) coming += !passed_over(id, t_offer);
    if (coming == 0) { /* none of its workers can come lately: no offer, no wake-up */
        run_serial(probed, n, fn, ctx);
        loop->ns = now_ns() - t0;
        A.passed_over_jobs++;
        pthread_mutex_unlock(&P.busy);
        return;
    }
    const int caller_cpu = sched_getcpu();
    atomic_store(&P.caller_cpu, caller_cpu);
    atomic_store(&j.done, probed);
    for (int r = 0; r < j.want; ++r) {
        atomic_store(&j.part[r].next, n * r / j.want + (r == 0 ? probed : 0));
        j.part[r].end = n * (r + 1) / j.want;
    }
    atomic_store(&P.job, &j);
    const uint32_t gen = atomic_fetch_add(&P.gen, 1) + 1;
    for (int id = 1; id < j.want; ++id)
        if (!passed_over(id, t_offer)) ring(id);
    const int64_t t1 = now_ns();
    const int64_t mine = probed + run_items(&j, 0);
    const int64_t caller_ns = probe_ns + now_ns() - t1;
    atomic_store(&P.job, NULL); /* withdrawn: late workers see NULL */
    wait_for_items(&j, A.on & 8); /* claimed items finish, and the workers leave the job, which lives on this stack */
    for (int spins = 0; atomic_load(&P.inside) > 0;)
        if (++spins < 2000) pause_cpu();
        else sched_yield();
    /* scored from the offer on: the probe's item had no workers to gain from (with one item left, none) */
    if (n - probed > 1) {
        /* the caller's pace over all offered items; where it ran none, it lost its core: neither gain nor loss */
        const int64_t wall = now_ns() - t_offer, offered_mine = mine - probed;
        const int64_t estimate = offered_mine > 0 ? (caller_ns - probe_ns) * (n - probed) / offered_mine : wall;
        keep_score(wall, estimate);
        if (offered_mine > 0) judge_loop(loop, wall, estimate);
    }
    judge_workers(gen, j.want, t_offer, caller_cpu);
    if (mine > 0) loop->ns = caller_ns * n / mine;
    pthread_mutex_unlock(&P.busy);
}

void x86_parallel(int threads, int64_t n, x86_task_fn fn, void *ctx) {
    parallel_as((const void *)fn, threads, n, fn, ctx);
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
    parallel_as((const void *)fn, threads, (n + r.per - 1) / r.per, range_task, &r);
}

const x86_pool_api x86_pool_functions = {x86_parallel, x86_parallel_ranges};
