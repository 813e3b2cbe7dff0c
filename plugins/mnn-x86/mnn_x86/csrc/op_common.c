/* What every op's run function shares: the error hook and input checks. */
#include "ops.h"

const char *x86_op_error(void *state) { return ((x86_op *)state)->error; }
