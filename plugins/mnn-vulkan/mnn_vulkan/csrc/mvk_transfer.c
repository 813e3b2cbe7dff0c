/* A run's host copies as mnn C ABI executions (mvk.h): the core's copy steps between host memory and
 * the arena, run by its run loop without the GIL like a segment. Beside skipping the interpreter, an
 * upload that reads its input's pointer at every run (MNN_EXEC_INPUTS_MAY_MOVE) lets the session
 * hand it the caller's array itself: the input is not first copied into the host arena, one memcpy
 * of the whole input fewer per run. */
#include <stdlib.h>

#include "mvk_internal.h"

struct mvk_transfer {
    mnn_execution exe;
    mvk_buffer *buf; /* kept alive by the Python object that owns this */
    uint64_t offset, size;
    int half, to_device;
    char error[512];
};

static int transfer_run(void *state, const mnn_tensor *inputs, int32_t n_inputs, mnn_tensor *outputs,
                        int32_t n_outputs) {
    mvk_transfer *t = state;
    t->error[0] = 0;
    if (n_inputs != 1 || n_outputs != 1) {
        mvk_set_error(t->error, sizeof t->error, "a copy step takes one input and one output");
        return MVK_ERROR;
    }
    if (t->to_device)
        return mvk_buffer_write_as(t->buf, t->offset, inputs[0].data, t->size, t->half, t->error, sizeof t->error);
    return mvk_buffer_read_as(t->buf, t->offset, outputs[0].data, t->size, t->half, t->error, sizeof t->error);
}

static const char *transfer_error(void *state) {
    mvk_transfer *t = state;
    return t->error[0] ? t->error : NULL;
}

mvk_transfer *mvk_transfer_create(mvk_buffer *buf, uint64_t offset, uint64_t size, int half, int to_device) {
    mvk_transfer *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->buf = buf;
    t->offset = offset;
    t->size = size;
    t->half = half;
    t->to_device = to_device;
    t->exe.abi_version = MNN_ABI_VERSION;
    t->exe.flags = to_device ? MNN_EXEC_INPUTS_MAY_MOVE : 0;
    t->exe.run = transfer_run;
    t->exe.state = t;
    t->exe.error = transfer_error;
    t->exe.name = to_device ? "vulkan:upload" : "vulkan:download";
    return t;
}

mnn_execution *mvk_transfer_execution(mvk_transfer *t) { return &t->exe; }

void mvk_transfer_destroy(mvk_transfer *t) { free(t); }
