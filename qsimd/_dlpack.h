/* The DLPack ABI (version 1.x) as far as qsimd reads it: tensors of other array libraries
 * (PyTorch, JAX, CuPy's host arrays, ...) handed over through `__dlpack__()` capsules or,
 * without any Python call, through a type's `__dlpack_c_exchange_api__` table. Only the
 * layouts are declared here; the rules for using them are in _core.pyx. */
#ifndef QSIMD_DLPACK_H
#define QSIMD_DLPACK_H

#include <stdint.h>

/* device types whose memory the CPU reads directly */
enum { QS_DL_CPU = 1, QS_DL_CUDA_HOST = 3, QS_DL_ROCM_HOST = 11, QS_DL_CUDA_MANAGED = 13 };
/* type codes (DLDataTypeCode) */
enum {
    QS_DL_INT = 0, QS_DL_UINT = 1, QS_DL_FLOAT = 2, QS_DL_BFLOAT = 4, QS_DL_COMPLEX = 5,
    QS_DL_BOOL = 6, QS_DL_F8_E3M4 = 7, QS_DL_F8_E4M3 = 8, QS_DL_F8_E4M3B11FNUZ = 9,
    QS_DL_F8_E4M3FN = 10, QS_DL_F8_E4M3FNUZ = 11, QS_DL_F8_E5M2 = 12, QS_DL_F8_E5M2FNUZ = 13,
    QS_DL_F8_E8M0FNU = 14, QS_DL_F6_E2M3FN = 15, QS_DL_F6_E3M2FN = 16, QS_DL_F4_E2M1FN = 17
};
#define QS_DL_READ_ONLY 1u   /* DLManagedTensorVersioned.flags bit 0 */

typedef struct { int32_t device_type; int32_t device_id; } qs_dldevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } qs_dltype;
typedef struct {
    void *data;
    qs_dldevice device;
    int32_t ndim;
    qs_dltype dtype;
    int64_t *shape;
    int64_t *strides;       /* in elements; NULL (before DLPack 1.2): C-contiguous */
    uint64_t byte_offset;
} qs_dltensor;

/* "dltensor" capsules (DLPack < 1.0) */
typedef struct qs_dlmanaged {
    qs_dltensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct qs_dlmanaged *self);
} qs_dlmanaged;

typedef struct { uint32_t major; uint32_t minor; } qs_dlversion;

/* "dltensor_versioned" capsules (DLPack >= 1.0) */
typedef struct qs_dlmanaged_v {
    qs_dlversion version;
    void *manager_ctx;
    void (*deleter)(struct qs_dlmanaged_v *self);
    uint64_t flags;
    qs_dltensor dl_tensor;
} qs_dlmanaged_v;

/* A type's `__dlpack_c_exchange_api__` (a capsule named "dlpack_exchange_api", DLPack 1.2+):
 * C functions of the producer, called with the GIL held. */
typedef struct qs_dlapi_header {
    qs_dlversion version;
    struct qs_dlapi_header *prev_api;
} qs_dlapi_header;

typedef struct {
    qs_dlapi_header header;
    void *managed_tensor_allocator;
    /* an owning tensor (its deleter releases it); 0, or -1 with a Python exception set */
    int (*managed_tensor_from_py_object_no_sync)(void *py_object, qs_dlmanaged_v **out);
    void *managed_tensor_to_py_object_no_sync;
    /* a borrowed description, valid while the object is not changed; may be NULL */
    int (*dltensor_from_py_object_no_sync)(void *py_object, qs_dltensor *out);
    void *current_work_stream;
} qs_dlapi;

#endif
