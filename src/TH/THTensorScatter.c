#include "THKernelsScatter.h"
#define TH_GENERIC_FILE "generic/THTensorScatter.c"
#include "THGenerateAllTypes.h"
