/* The DLPack exchange structs (ABI 1.x), written from the public DLPack
 * specification (dmlc.github.io/dlpack). Only what DLPack.c reads and writes:
 * the layout must match the spec field for field, since other libraries hand
 * us these structs and free ours. */
#ifndef THP_DLPACK_H
#define THP_DLPACK_H

#include <stdint.h>

#define THP_DLPACK_MAJOR 1
#define THP_DLPACK_MINOR 1

/* flags of DLManagedTensorVersioned */
#define THP_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define THP_DLPACK_FLAG_IS_COPIED (UINT64_C(1) << 1)

/* capsule names: a consumer renames the capsule when it takes ownership */
#define THP_DLPACK_NAME "dltensor"
#define THP_DLPACK_USED_NAME "used_dltensor"
#define THP_DLPACK_VERSIONED_NAME "dltensor_versioned"
#define THP_DLPACK_VERSIONED_USED_NAME "used_dltensor_versioned"

typedef struct { uint32_t major, minor; } DLPackVersion;

typedef enum {
  kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLOpenCL = 4, kDLVulkan = 7, kDLMetal = 8, kDLVPI = 9,
  kDLROCM = 10, kDLROCMHost = 11, kDLExtDev = 12, kDLCUDAManaged = 13, kDLOneAPI = 14, kDLWebGPU = 15,
  kDLHexagon = 16, kDLMAIA = 17
} DLDeviceType;

typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;

typedef enum {
  kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLOpaqueHandle = 3, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6
} DLDataTypeCode;

/* code is a DLDataTypeCode; bits per lane; lanes > 1 for vector types */
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;

typedef struct {
  void *data;              /* the first element is at (char *)data + byte_offset */
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;        /* in elements; NULL: compact row-major */
  uint64_t byte_offset;
} DLTensor;

/* legacy (pre-1.0) managed tensor: capsule "dltensor" */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

/* versioned managed tensor: capsule "dltensor_versioned" */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif
