/* generic/THTensorFactory.c: window functions */
#ifndef TH_KERNELS_FACTORY_H
#define TH_KERNELS_FACTORY_H
#include "THDispatch.h"
enum { TH_WINDOW_HAMMING, TH_WINDOW_BLACKMAN, TH_WINDOW_BARTLETT, TH_WINDOW_KAISER };
TH_DECLARE_FLOATING(window_loop)
#endif
