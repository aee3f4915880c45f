/* Activations: at_act(name, x, args) and at_act_backward(name, grad, x, args);
 * args are the op's scalar parameters in declaration order. */
#ifndef AT_ACTIVATION_H
#define AT_ACTIVATION_H
#include "ATen.h"

AT_API THTensor *at_act(const char *name, const THTensor *x, int nargs, const double *args, THTensor *out);
AT_API THTensor *at_act_backward(const char *name, const THTensor *grad, const THTensor *x, int nargs,
                                 const double *args);
/* helpers with the declared signatures */
#define AT_ARGS(...) (sizeof((double[]){__VA_ARGS__}) / sizeof(double)), (double[]){__VA_ARGS__}
static inline double at_sval(ATScalar s) { return s.kind == AT_SCALAR_FLOAT ? s.d : (double)s.i; }

#endif
