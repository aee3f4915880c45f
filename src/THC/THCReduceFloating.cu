// Reductions over float16, bfloat16, float32 and float64: the instantiations of THCReduce.cuh's templates.
#include "THCReduce.cuh"

int thc_reduce_floating(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
                        THDtype out_dt, void *out, int64_t *idx, double arg) {
  switch (dt) {
    case TH_Half: return launch<__half>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_BFloat16: return launch<__nv_bfloat16>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Float: return launch<float>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Double: return launch<double>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    default: break;
  }
  THError_set(TH_ERR_RUNTIME, "reduction on CUDA: unsupported dtype %s", THDtype_info[dt].legacy);
  return -1;
}
