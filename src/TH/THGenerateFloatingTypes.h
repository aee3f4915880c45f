/* Instantiates TH_GENERIC_FILE for: FLOATING */
#define TH_GEN_FLOATING
#include "THGenerateTypes.h"
#undef TH_GEN_FLOATING
