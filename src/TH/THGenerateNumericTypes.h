/* Instantiates TH_GENERIC_FILE for: INTEGRAL FLOATING */
#define TH_GEN_INTEGRAL
#define TH_GEN_FLOATING
#include "THGenerateTypes.h"
#undef TH_GEN_INTEGRAL
#undef TH_GEN_FLOATING
