/* posix_memalign from <stdlib.h>, declared for Cython without feature macros */
#include <stdlib.h>
