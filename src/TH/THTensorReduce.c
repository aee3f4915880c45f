#include "THLoops.h"
#include <stdlib.h>
#include <string.h>
#define TH_GENERIC_FILE "generic/THTensorReduce.c"
#include "THGenerateAllTypes.h"
