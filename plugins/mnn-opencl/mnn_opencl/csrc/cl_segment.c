/* The data path: a segment's kernels enqueued on one in-order queue.
 *
 * Kernel arguments (the arena buffer, tensor offsets, shapes) were set once at
 * resize, so a run is one clEnqueueNDRangeKernel per launch and nothing else:
 * no allocation, no host wait. The host waits once per run, when the core reads
 * an output back (a blocking clEnqueueReadBuffer on the same queue).
 */
#include <stdio.h>

#include "mnn_cl.h"

cl_int mnncl_segment_enqueue(mnncl_segment *seg, int32_t first, int32_t last) {
    for (int32_t i = first; i < last; ++i) {
        const mnncl_launch *l = &seg->launches[i];
        cl_int rc = mnncl.EnqueueNDRangeKernel(seg->queue, l->kernel, l->dims, NULL, l->gws,
                                               l->has_lws ? l->lws : NULL, 0, NULL, NULL);
        if (rc != CL_SUCCESS) {
            snprintf(seg->error, sizeof seg->error, "clEnqueueNDRangeKernel(%s) failed: %s (%d)",
                     l->name ? l->name : "?", mnncl_error_name(rc), rc);
            return rc;
        }
    }
    return CL_SUCCESS;
}

int mnncl_segment_run(void *state, const mnn_tensor *inputs, int32_t n_inputs, mnn_tensor *outputs,
                      int32_t n_outputs) {
    (void)inputs; (void)n_inputs; (void)outputs; (void)n_outputs; /* bound at resize */
    mnncl_segment *seg = (mnncl_segment *)state;
    if (mnncl_forked()) {
        snprintf(seg->error, sizeof seg->error, "%s", FORK_MESSAGE);
        return 1;
    }
    if (mnncl_segment_enqueue(seg, 0, seg->n_launches) != CL_SUCCESS) return 1;
    if (seg->flush) {
        cl_int rc = mnncl.Flush(seg->queue);
        if (rc != CL_SUCCESS) {
            snprintf(seg->error, sizeof seg->error, "clFlush failed: %s (%d)", mnncl_error_name(rc), rc);
            return 1;
        }
    }
    return 0;
}

const char *mnncl_segment_error(void *state) {
    mnncl_segment *seg = (mnncl_segment *)state;
    return seg->error[0] ? seg->error : NULL;
}
