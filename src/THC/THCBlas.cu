// GEMM through cuBLAS (stub until it lands).
#include "THCGeneral.h"

extern "C" int thc_gemm(THDtype dt, char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
                        const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
                        double beta, void *c, int64_t ldc, int64_t stride_c, int64_t batch) {
  THError_set(TH_ERR_NOTIMPL, "GEMM on CUDA is not implemented yet");
  return -1;
}
