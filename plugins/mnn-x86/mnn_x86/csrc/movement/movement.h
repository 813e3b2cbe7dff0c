/* Data movement on x86 (mnn_x86/_movement.pyx, ops_movement.py): ops that copy, select or convert
 * elements and do no arithmetic. Any dtype moves as bytes of mnn_dtype_size. */
#ifndef MNN_X86_MOVEMENT_H
#define MNN_X86_MOVEMENT_H

#include "family.h"

/* Identity: a copy of the input, cut into ranges for the pool */
typedef struct {
    x86_op op;
} x86_copy_state;
int x86_copy_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
