#include "THKernelsScan.h"
#define TH_GENERIC_FILE "generic/THTensorScan.c"
#include "THGenerateAllTypes.h"
