#include "THKernelsIndexing.h"
#define TH_GENERIC_FILE "generic/THTensorIndexing.c"
#include "THGenerateAllTypes.h"
