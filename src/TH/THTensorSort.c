#include "THKernelsSort.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#define TH_GENERIC_FILE "generic/THTensorSort.c"
#include "THGenerateAllTypes.h"
