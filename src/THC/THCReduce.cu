// thc_reduce: checks a reduction's call and hands it to the dtype half that
// instantiates its kernels (THCReduce.cuh says why there are halves).
#include "THCReduce.cuh"

extern "C" int thc_reduce(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
                          THDtype out_dt, void *out, int64_t *idx, double arg) {
  if (M <= 0) return 0;
  bool floating_only = op == AT_RED_VAR || op == AT_RED_STD || op == AT_RED_LOGSUMEXP || op == AT_RED_NORM2;
  if (floating_only && !THDtype_isFloating(dt)) {
    THError_set(TH_ERR_RUNTIME, "reduction on CUDA: expected a floating point input, got %s", THDtype_info[dt].legacy);
    return -1;
  }
  if (THDtype_isFloating(dt)) return thc_reduce_floating(op, dt, x, M, K, sm, sk, out_dt, out, idx, arg);
  return thc_reduce_integral(op, dt, x, M, K, sm, sk, out_dt, out, idx, arg);
}
