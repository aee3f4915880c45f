/* Sparse COO compute: coalesce and the sum of two COO tensors. The sparse
 * tensor is a Python class (cthtorch/_sparse_tensor.py) holding an int64
 * index matrix (sparse_dim x nnz) and a dense values tensor (nnz x dense
 * dims); these kernels take those parts and return new ones. Values are
 * float32, float64 or int64 (others: TH_ERR_NOTIMPL, the caller takes its
 * dense-op path). */
#ifndef AT_SPARSE_H
#define AT_SPARSE_H
#include "ATen.h"

/* Sorts the entries by position (row-major over sparse_sizes) and sums the
 * values of repeated positions, in entry order. */
AT_API int at_sparse_coalesce(const THTensor *indices, const THTensor *values, const ATIntList *sparse_sizes,
                              THTensor **out_indices, THTensor **out_values);
/* t + alpha * s as torch's CPU kernel forms it: one merge walk over both
 * entry lists, comparing index columns; equal columns give one entry
 * t + alpha * s. On coalesced inputs the result is coalesced; on others it
 * keeps torch's entry order (what it prints). */
AT_API int at_sparse_add(const THTensor *t_indices, const THTensor *t_values, const THTensor *s_indices,
                         const THTensor *s_values, double alpha, THTensor **out_indices, THTensor **out_values);
#endif
