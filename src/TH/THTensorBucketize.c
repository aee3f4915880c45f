#include "THKernelsBucketize.h"
#define TH_GENERIC_FILE "generic/THTensorBucketize.c"
#include "THGenerateNumericTypes.h"
