/* Activation dispatch: name -> (forward, backward) kernel tables. */
#include "ATActivation.h"
#include "../TH/THKernelsActivation.h"
#include "../TH/THLoops.h"

#include <string.h>

typedef struct { const char *name; THLoopFn fwd[TH_NDTYPES], bwd[TH_NDTYPES]; } ActDef;
#define ACT_ENTRY(n) { #n, TH_FLOATING_TABLE(n##_loop), TH_FLOATING_TABLE(n##_backward_loop) },
static const ActDef acts[] = { TH_ACTIVATIONS(ACT_ENTRY) };

static const ActDef *find(const char *name) {
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
    if (!strcmp(acts[i].name, name)) return &acts[i];
  THError_set(TH_ERR_NOTIMPL, "activation '%s' is not implemented", name);
  return NULL;
}

static void pack(THOpArgs *a, int n, const double *v) {
  for (int i = 0; i < n && i < 4; i++) { a->d[i] = v[i]; a->i[i] = (int64_t)v[i]; }
}

THTensor *at_act(const char *name, const THTensor *x, int nargs, const double *args, THTensor *out) {
  const ActDef *d = find(name);
  if (!d) return NULL;
  if (!THDtype_isFloating(x->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", name, THDtype_info[x->dtype].legacy);
    return NULL;
  }
  THOpArgs a = {{0}};
  pack(&a, nargs, args);
  ATIterSpec spec = { .out = out, .out_dtype = x->dtype, .common_dtype = x->dtype, .inplace = out == x, .check_cast = true, .name = name };
  const THTensor *in[1] = { x };
  return at_iter_run(&spec, 1, in, d->fwd[x->dtype], &a);
}

THTensor *at_act_backward(const char *name, const THTensor *grad, const THTensor *x, int nargs, const double *args) {
  const ActDef *d = find(name);
  if (!d) return NULL;
  THOpArgs a = {{0}};
  pack(&a, nargs, args);
  const THTensor *in[2] = { grad, x };
  THDtype dt = at_result_type(2, in);
  if (!THDtype_isFloating(dt)) dt = at_default_dtype();
  ATIterSpec spec = { .out = NULL, .out_dtype = dt, .common_dtype = dt, .name = name };
  return at_iter_run(&spec, 2, in, d->bwd[dt], &a);
}
