/* The thread pool of parallel.h: workers sleep on a condition variable until a region is posted
 * (its generation number changes), run their part, and the last one to finish wakes the caller. */
#include "parallel.h"

#include <pthread.h>

typedef struct region {
    arm_range_fn fn;
    void *ctx;
    int64_t n, step;
    int parts;
} region;

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; /* held for the whole of one parallel region */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static region current;
static uint64_t generation;
static int workers, pending;
static int atfork_set;
static uint64_t start_gen[ARM_MAX_THREADS]; /* the generation a worker was made in: it waits for the next */

static void run_part(const region *r, int p) {
    const int64_t b = p * r->step, e = b + r->step < r->n ? b + r->step : r->n;
    if (b < e) r->fn(r->ctx, b, e, p);
}

static void *worker(void *arg) {
    const int id = (int)(intptr_t)arg; /* 1.. : part 0 is the caller's */
    pthread_mutex_lock(&lock);
    uint64_t seen = start_gen[id];
    for (;;) {
        while (generation == seen) pthread_cond_wait(&wake, &lock);
        seen = generation;
        const region r = current;
        if (id >= r.parts) continue; /* not needed this time */
        pthread_mutex_unlock(&lock);
        run_part(&r, id);
        pthread_mutex_lock(&lock);
        if (--pending == 0) pthread_cond_signal(&done);
    }
    return NULL;
}

/* a forked child has none of the parent's threads: it starts its own pool when it needs one */
static void after_fork_child(void) {
    pthread_mutex_init(&busy, NULL);
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&done, NULL);
    workers = 0;
    pending = 0;
}

/* grow the pool to `want` workers (called with `lock` held); returns how many there are */
static int grow(int want) {
    if (!atfork_set) {
        pthread_atfork(NULL, NULL, after_fork_child);
        atfork_set = 1;
    }
    if (want > ARM_MAX_THREADS - 1) want = ARM_MAX_THREADS - 1;
    while (workers < want) {
        pthread_t t;
        start_gen[workers + 1] = generation;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        const int rc = pthread_create(&t, &attr, worker, (void *)(intptr_t)(workers + 1));
        pthread_attr_destroy(&attr);
        if (rc != 0) break; /* no more threads: the parts left run on the caller */
        ++workers;
    }
    return workers;
}

int arm_parts(int threads, int64_t n, int64_t grain) {
    if (grain < 1) grain = 1;
    if (threads > ARM_MAX_THREADS) threads = ARM_MAX_THREADS;
    const int64_t units = (n + grain - 1) / grain;
    int64_t parts = threads < units ? threads : units;
    return parts < 1 ? 1 : (int)parts;
}

void arm_parallel(int threads, int64_t n, int64_t grain, arm_range_fn fn, void *ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    const int parts = arm_parts(threads, n, grain);
    const int64_t units = (n + grain - 1) / grain;
    region r = {fn, ctx, n, (units + parts - 1) / parts * grain, parts};
    if (parts == 1) {
        fn(ctx, 0, n, 0);
        return;
    }
    if (pthread_mutex_trylock(&busy) != 0) { /* another region is running: the same parts, in turn */
        for (int p = 0; p < parts; ++p) run_part(&r, p);
        return;
    }
    pthread_mutex_lock(&lock);
    const int have = grow(parts - 1);
    int posted = parts - 1 < have ? parts - 1 : have;
    if (posted > 0) {
        current = r;
        current.parts = posted + 1;
        pending = posted;
        ++generation;
        pthread_cond_broadcast(&wake);
    }
    pthread_mutex_unlock(&lock);
    run_part(&r, 0);
    for (int p = posted + 1; p < parts; ++p) run_part(&r, p); /* threads the pool could not start */
    if (posted > 0) {
        pthread_mutex_lock(&lock);
        while (pending > 0) pthread_cond_wait(&done, &lock);
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_unlock(&busy);
}

int arm_pool_workers(void) {
    pthread_mutex_lock(&lock);
    const int n = workers;
    pthread_mutex_unlock(&lock);
    return n;
}
