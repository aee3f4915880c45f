#include "THLoops.h"
#define TH_GENERIC_FILE "generic/THTensorCopy.c"
#include "THGenerateAllTypes.h"
