#include "THLoops.h"
#include "THMath.h"   /* TH_POW: the vector pow in pow_loop */
#include "THIncompleteGamma.h"
_Atomic int th_kernel_error;
#define TH_GENERIC_FILE "generic/THTensorBinary.c"
#include "THGenerateAllTypes.h"
