#include "THLoops.h"
#include "THSpecialFunctions.h"
#define TH_GENERIC_FILE "generic/THTensorSpecial.c"
#include "THGenerateFloatingTypes.h"
