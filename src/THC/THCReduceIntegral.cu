// Reductions over bool and the integer types: the instantiations of THCReduce.cuh's templates.
#include "THCReduce.cuh"

int thc_reduce_integral(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
                        THDtype out_dt, void *out, int64_t *idx, double arg) {
  switch (dt) {
    case TH_Bool: return launch<bool>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_UInt8: return launch<unsigned char>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int8: return launch<signed char>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int16: return launch<short>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int32: return launch<int>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int64: return launch<long long>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    default: break;
  }
  THError_set(TH_ERR_RUNTIME, "reduction on CUDA: unsupported dtype %s", THDtype_info[dt].legacy);
  return -1;
}
