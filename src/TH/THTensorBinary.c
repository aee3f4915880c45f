#include "THLoops.h"
int th_kernel_error;
#define TH_GENERIC_FILE "generic/THTensorBinary.c"
#include "THGenerateAllTypes.h"
