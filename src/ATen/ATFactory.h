/* Factories beyond ATen.h's: window functions (ATFactory.c). */
#ifndef AT_FACTORY_H
#define AT_FACTORY_H
#include "ATen.h"
#include "../TH/THKernelsFactory.h"   /* TH_WINDOW_* */

/* window of the given kind (TH_WINDOW_HAMMING covers hann: alpha = beta = 0.5);
 * name for messages; alpha/beta: hamming's coefficients, beta: kaiser's */
AT_API THTensor *at_window(int kind, const char *name, int64_t window_length, bool periodic, double alpha,
                           double beta, THDtype dtype);
#endif
