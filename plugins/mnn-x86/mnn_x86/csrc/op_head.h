/* The head every op state starts with, for the op modules of _x86 (ops.h) and the families built
 * apart (family.h), which see only this of _x86's op layer. */
#ifndef MNN_X86_OP_HEAD_H
#define MNN_X86_OP_HEAD_H

#include "mnn_core/abi.h"
#include "x86.h"

typedef struct x86_op {
    const x86_kernels *k;
    int32_t threads;
    const char *error; /* why the last run failed, or NULL */
} x86_op;

const char *x86_op_error(void *state);

#endif
