#include "THLoops.h"
#define TH_GENERIC_FILE "generic/THTensorComplex.c"
#include "THGenerateComplexTypes.h"
