/* Instantiates TH_GENERIC_FILE for: BOOL INTEGRAL */
#define TH_GEN_BOOL
#define TH_GEN_INTEGRAL
#include "THGenerateTypes.h"
#undef TH_GEN_BOOL
#undef TH_GEN_INTEGRAL
