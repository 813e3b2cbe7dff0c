/* A grow-only, 64-byte aligned scratch buffer per calling thread, shared by every op of one kind that
 * the thread runs one after another, instead of one per node and plan; freed when the thread ends.
 * Each translation unit that includes this gets its own buffer (its own key). */
#ifndef MNN_X86_THREAD_SCRATCH_H
#define MNN_X86_THREAD_SCRATCH_H

#include <pthread.h>
#include <stdlib.h>

typedef struct {
    void *p;
    size_t n;
} thread_scratch_buf;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *v) {
    thread_scratch_buf *sc = (thread_scratch_buf *)v;
    free(sc->p);
    free(sc);
}

static void scratch_init(void) { pthread_key_create(&scratch_key, scratch_free); }

/* At least `bytes` of this thread's scratch (its contents not kept), or NULL when out of memory. */
static void *thread_scratch(size_t bytes) {
    pthread_once(&scratch_once, scratch_init);
    thread_scratch_buf *sc = (thread_scratch_buf *)pthread_getspecific(scratch_key);
    if (!sc) {
        sc = (thread_scratch_buf *)calloc(1, sizeof *sc);
        if (!sc || pthread_setspecific(scratch_key, sc) != 0) {
            free(sc);
            return NULL;
        }
    }
    if (sc->n < bytes) {
        free(sc->p);
        sc->p = NULL, sc->n = 0;
        if (posix_memalign(&sc->p, 64, bytes) != 0) return sc->p = NULL;
        sc->n = bytes;
    }
    return sc->p;
}

#endif
