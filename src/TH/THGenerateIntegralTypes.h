/* Instantiates TH_GENERIC_FILE for: INTEGRAL */
#define TH_GEN_INTEGRAL
#include "THGenerateTypes.h"
#undef TH_GEN_INTEGRAL
