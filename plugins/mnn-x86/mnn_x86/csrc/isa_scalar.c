/* The scalar ISA level: plain C, compiled with -O3 and no ISA flags. It runs on
 * any CPU and is the fallback of the dispatch. */
#include "vec_scalar.h"
#include "isa_body.h"
