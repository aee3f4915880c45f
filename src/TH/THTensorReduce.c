#include "THLoops.h"
#include <stdlib.h>
#define TH_GENERIC_FILE "generic/THTensorReduce.c"
#include "THGenerateAllTypes.h"
