#include "THKernelsFactory.h"
#define TH_GENERIC_FILE "generic/THTensorFactory.c"
#include "THGenerateFloatingTypes.h"
