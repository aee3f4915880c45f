// Elementwise kernels: the CUDA twins of the TH loops (stub until the kernels land).
#include "THCGeneral.h"

extern "C" int thc_loop(THLoopFn cpu_fn, const ATCudaLoop *L, const void *extra) {
  (void)cpu_fn; (void)L; (void)extra;
  THError_set(TH_ERR_NOTIMPL, "this elementwise op has no CUDA kernel yet");
  return -1;
}
