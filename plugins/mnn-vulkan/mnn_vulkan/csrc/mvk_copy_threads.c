/* Host memcpy of a run's copies spread over helper threads (MNN_VULKAN_COPY_THREADS=n: n - 1 helpers
 * beside the copying thread). One thread's memcpy into pinned staging memory runs at what one core's
 * outstanding cache misses allow, and a batch's input is megabytes; the DMA of the chunks overlaps
 * it already (mvk_memory.c). The helpers are made at the first large copy and wait on a condition
 * variable between jobs; a job is one memcpy (or float16 conversion) cut into equal parts. Called
 * with the context's copy lock held, so one job at a time. A forked child has no helpers, but it
 * cannot use the parent's device anyway (device.py). */
#include <stdlib.h>
#include <string.h>

#include "mvk_internal.h"

#define PARALLEL_MIN (512u << 10) /* smaller copies stay on one thread */

struct mvk_copy_pool {
    int helpers;
    pthread_t *threads;
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t generation;
    int next_part, pending, stop;
    /* the job: device-side bytes [0, bytes) in parts of `part`; half: the host side is float32 */
    char *dst;
    const char *src;
    uint64_t bytes, part;
    int half, to_device;
};

static void copy_part(mvk_copy_pool *p, int k) {
    uint64_t a = (uint64_t)k * p->part, b = a + p->part < p->bytes ? a + p->part : p->bytes;
    if (a >= b) return;
    uint64_t host_a = p->half ? a * 2 : a;
    if (p->to_device) {
        if (p->half)
            mvk_narrow((const float *)(p->src + host_a), (uint16_t *)(p->dst + a), (b - a) / 2);
        else
            memcpy(p->dst + a, p->src + a, b - a);
    } else {
        if (p->half)
            mvk_widen((const uint16_t *)(p->src + a), (float *)(p->dst + host_a), (b - a) / 2);
        else
            memcpy(p->dst + a, p->src + a, b - a);
    }
}

static void *helper(void *arg) {
    mvk_copy_pool *p = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == seen && !p->stop) pthread_cond_wait(&p->go, &p->lock);
        if (p->stop) break;
        seen = p->generation;
        int k = p->next_part++;
        pthread_mutex_unlock(&p->lock);
        copy_part(p, k);
        pthread_mutex_lock(&p->lock);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static mvk_copy_pool *pool_create(int helpers) {
    mvk_copy_pool *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->threads = calloc((size_t)helpers, sizeof *p->threads);
    if (p->threads == NULL) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < helpers; ++i) {
        if (pthread_create(&p->threads[i], NULL, helper, p) != 0) break;
        p->helpers++;
    }
    return p;
}

void mvk_copy_pool_destroy(mvk_copy_pool *p) {
    if (p == NULL) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->helpers; ++i) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}

/* dst <- src: `bytes` device-side bytes (half: float32 on the host side, narrowed or widened) */
void mvk_host_copy(mvk_context *ctx, void *dst, const void *src, uint64_t bytes, int half, int to_device) {
    if (ctx->copy_threads > 1 && bytes >= PARALLEL_MIN && ctx->copy_pool_threads == NULL)
        ctx->copy_pool_threads = pool_create(ctx->copy_threads - 1);
    mvk_copy_pool *p = ctx->copy_pool_threads;
    if (p == NULL || p->helpers == 0 || bytes < PARALLEL_MIN) {
        mvk_copy_pool one = {.dst = dst, .src = src, .bytes = bytes, .part = bytes, .half = half,
                             .to_device = to_device};
        copy_part(&one, 0);
        return;
    }
    int parts = p->helpers + 1;
    pthread_mutex_lock(&p->lock);
    p->dst = dst;
    p->src = src;
    p->bytes = bytes;
    p->part = ((bytes + (uint64_t)parts - 1) / (uint64_t)parts + 63) & ~63ull; /* whole cache lines */
    p->half = half;
    p->to_device = to_device;
    p->next_part = 1; /* part 0 is this thread's */
    p->pending = p->helpers;
    p->generation++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->lock);
    copy_part(p, 0);
    pthread_mutex_lock(&p->lock);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
