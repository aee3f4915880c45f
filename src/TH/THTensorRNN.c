#include <math.h>
#define TH_GENERIC_FILE "generic/THTensorRNN.c"
#include "THGenerateFloatingTypes.h"
