#include "THLoops.h"
#include <math.h>
#define TH_GENERIC_FILE "generic/THTensorActivation.c"
#include "THGenerateFloatingTypes.h"
