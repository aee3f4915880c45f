/* Devices: where a tensor's memory lives, and moving it between host and GPU.
 * The CUDA side is reached only through at_cuda (ATCuda.h). */
#include "ATen.h"
#include "ATCuda.h"

#include <stdio.h>
#include <string.h>

const ATCudaHooks *at_cuda = NULL;
ATCudnnFlags at_cudnn_flags = { .enabled = true, .benchmark = false, .deterministic = false, .allow_tf32 = true };
int64_t at_cudnn_taken = 0, at_cudnn_declined = 0;

int at_cuda_register(const ATCudaHooks *hooks) {
  if (!hooks || hooks->abi != AT_CUDA_ABI) {
    THError_set(TH_ERR_RUNTIME, "libTHC was built for another libATen (CUDA hook table version %d, expected %d): "
                "rebuild with `python setup.py develop`", hooks ? hooks->abi : -1, AT_CUDA_ABI);
    return -1;
  }
  at_cuda = hooks;
  return 0;
}

const char *at_device_str(int device, char *buf, size_t n) {
  if (device == TH_DEVICE_META) snprintf(buf, n, "meta");
  else if (device < 0) snprintf(buf, n, "cpu");
  else snprintf(buf, n, "cuda:%d", device);
  return buf;
}

const THAllocator *at_allocator_for(int device) {
  if (device == TH_DEVICE_META) return &THMetaAllocator;
  if (device < 0) return NULL;
  if (!at_cuda) {
    THError_set(TH_ERR_RUNTIME, "CUDA is not initialised (cthtorch.cuda.init())");
    return NULL;
  }
  if (at_cuda->set_device(device) < 0) return NULL;
  return at_cuda->allocator;
}

THTensor *at_new_on(int device, THDtype dtype, int ndim, const int64_t *sizes, const int64_t *strides) {
  if (device < 0 && device != TH_DEVICE_META) return THTensor_newStridedWithAllocator(dtype, ndim, sizes, strides, NULL);
  const THAllocator *a = at_allocator_for(device);
  return a ? THTensor_newStridedWithAllocator(dtype, ndim, sizes, strides, a) : NULL;
}

THTensor *at_empty_like_on(const THTensor *t, int device, THDtype dtype) {
  return at_new_on(device, dtype, t->ndim, t->sizes, THTensor_isNonOverlappingAndDense(t) ? t->strides : NULL);
}

/* Meta tensors join other meta tensors and 0-d host values (a Python
 * number, a CPU scalar tensor), as in torch; anything else is an error
 * naming the first operand's device as the expected one. */
static int common_meta_device(int n, const THTensor *const *ts, int *device) {
  int want = TH_DEVICE_META;
  bool first = true;
  for (int i = 0; i < n; i++) {
    if (!ts[i]) continue;
    int d = THTensor_device(ts[i]);
    if (d == -1 && ts[i]->ndim == 0) continue;
    if (first) { want = d; first = false; continue; }
    if (d == want) continue;
    char a[32], b[32];
    THError_set(TH_ERR_RUNTIME, "Tensor on device %s is not on the expected device %s!", at_device_str(d, a, sizeof a),
                at_device_str(want, b, sizeof b));
    return -1;
  }
  *device = TH_DEVICE_META;
  return 0;
}

int at_common_device(int n, const THTensor *const *ts, const char *name, int *device) {
  (void)name;
  /* one pass (every elementwise op comes here): dev is the first GPU, other the first operand
   * that cannot join it, in argument order; a host tensor with dims clashes with a GPU whether
   * it comes before or after it. -2: none. */
  int dev = -1, other = -2;
  bool host_dims = false;
  for (int i = 0; i < n; i++) {
    if (!ts[i]) continue;
    int d = THTensor_device(ts[i]);
    if (d == TH_DEVICE_META) return common_meta_device(n, ts, device);
    if (d < 0) {   /* 0-d host values (numbers) join any device */
      if (ts[i]->ndim > 0) {
        host_dims = true;
        if (dev >= 0 && other == -2) other = -1;
      }
      continue;
    }
    if (dev < 0) {
      dev = d;
      if (host_dims) other = -1;
    } else if (d != dev && other == -2) {
      other = d;
    }
  }
  if (dev >= 0 && other != -2) {
    char a[32], b[32];
    THError_set(TH_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                at_device_str(dev, a, sizeof a), at_device_str(other, b, sizeof b));
    return -1;
  }
  *device = dev;
  return 0;
}

/* A copy of t on device (and in dtype): the host<->device step is one
 * contiguous memcpy; dtype conversion and layout happen on the side that
 * holds the data (ATCopy.c's at_copy_ does both). */
THTensor *at_to_device(const THTensor *t, int device, THDtype dtype, bool copy) {
  if (THTensor_device(t) == device) return at_to_dtype(t, dtype, copy);
  if (THTensor_isMeta(t)) {
    THError_set(TH_ERR_NOTIMPL, "Cannot copy out of meta tensor; no data!");
    return NULL;
  }
  if (device == TH_DEVICE_META) return at_empty_like_on(t, device, dtype);   /* nothing to copy: the layout only */
  THTensor *r = at_new_on(device, dtype, t->ndim, t->sizes, NULL);
  if (!r) return NULL;
  if (at_copy_(r, t) < 0) { THTensor_free(r); return NULL; }
  return r;
}

/* dst and src differ in device. src is first made contiguous in dst's dtype
 * and shape on its own side, then one memcpy crosses, then (when dst is not
 * contiguous) a copy on dst's side scatters it. */
int at_copy_across_devices(THTensor *dst, const THTensor *src, bool non_blocking) {
  if (!at_cuda) { THError_set(TH_ERR_RUNTIME, "CUDA is not initialised"); return -1; }
  int sd = THTensor_device(src), dd = THTensor_device(dst);
  int64_t n = THTensor_numel(dst);
  if (n == 0) return 0;
  /* staging on the source side: src broadcast to dst's shape, dst's dtype,
   * contiguous (src itself when it already is all three) */
  THTensor *stage;
  bool same = src->dtype == dst->dtype && src->ndim == dst->ndim && THTensor_isContiguous(src) &&
              !memcmp(src->sizes, dst->sizes, dst->ndim * sizeof(int64_t));
  if (same) {
    stage = THTensor_retain((THTensor *)src);
  } else {
    stage = at_new_on(sd, dst->dtype, dst->ndim, dst->sizes, NULL);
    if (!stage) return -1;
    if (at_copy_(stage, src) < 0) { THTensor_free(stage); return -1; }
  }
  THTensor *land = THTensor_isContiguous(dst) ? THTensor_retain(dst) : at_new_on(dd, dst->dtype, dst->ndim, dst->sizes, NULL);
  if (!land) { THTensor_free(stage); return -1; }
  ATCopyKind kind = sd < 0 ? AT_H2D : (dd < 0 ? AT_D2H : AT_D2D);
  if (kind != AT_D2H && at_cuda->set_device(dd) < 0) goto fail;
  /* a host destination is read by the caller right after: never asynchronous */
  int rc = at_cuda->memcpy(THTensor_data(land), THTensor_data(stage), (size_t)n * THDtype_size(dst->dtype), kind,
                           non_blocking && kind == AT_H2D);
  if (rc < 0) goto fail;
  if (land != dst && at_copy_(dst, land) < 0) goto fail;
  THTensor_free(land);
  THTensor_free(stage);
  return 0;
fail:
  THTensor_free(land);
  THTensor_free(stage);
  return -1;
}
