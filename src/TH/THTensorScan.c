#include "THKernelsScan.h"
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#define TH_GENERIC_FILE "generic/THTensorScan.c"
#include "THGenerateAllTypes.h"
