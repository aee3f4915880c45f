#include "THLoops.h"
#include <math.h>
#define TH_GENERIC_FILE "generic/THTensorPointwise.c"
#include "THGenerateAllTypes.h"
