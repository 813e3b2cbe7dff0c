/* A run's host copies as mnn C ABI executions: the core's copy steps between host memory and the
 * arena, run by its run loop without the GIL like a segment, on the segments' in-order queue. An
 * upload reads its input's pointer at every run (MNN_EXEC_INPUTS_MAY_MOVE), so the session hands it
 * the caller's array itself: the input is not first copied into the host arena. Both copies block:
 * the caller may reuse its array once run() returns, and a download is where the host waits. */
#include <stdio.h>

#include "mnn_cl.h"

int mnncl_transfer_run(void *state, const mnn_tensor *inputs, int32_t n_inputs, mnn_tensor *outputs,
                       int32_t n_outputs) {
    mnncl_transfer *t = (mnncl_transfer *)state;
    t->error[0] = 0;
    if (mnncl_forked()) {
        snprintf(t->error, sizeof t->error, "%s", FORK_MESSAGE);
        return 1;
    }
    if (n_inputs != 1 || n_outputs != 1) {
        snprintf(t->error, sizeof t->error, "a copy step takes one input and one output");
        return 1;
    }
    if (t->nbytes == 0) return 0;
    cl_int rc;
    if (t->to_device)
        rc = mnncl.EnqueueWriteBuffer(t->queue, t->mem, CL_TRUE, t->offset, t->nbytes, inputs[0].data, 0, NULL, NULL);
    else
        rc = mnncl.EnqueueReadBuffer(t->queue, t->mem, CL_TRUE, t->offset, t->nbytes, outputs[0].data, 0, NULL, NULL);
    if (rc != CL_SUCCESS) {
        snprintf(t->error, sizeof t->error, "%s of %zu bytes failed: %s (%d)",
                 t->to_device ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", t->nbytes, mnncl_error_name(rc), rc);
        return 1;
    }
    return 0;
}

const char *mnncl_transfer_error(void *state) {
    mnncl_transfer *t = (mnncl_transfer *)state;
    return t->error[0] ? t->error : NULL;
}
