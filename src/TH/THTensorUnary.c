#include "THLoops.h"
#define TH_GENERIC_FILE "generic/THTensorUnary.c"
#include "THGenerateAllTypes.h"
