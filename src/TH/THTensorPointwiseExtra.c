#include "THLoops.h"
#include <math.h>
#define TH_GENERIC_FILE "generic/THTensorPointwiseExtra.c"
#include "THGenerateAllTypes.h"
