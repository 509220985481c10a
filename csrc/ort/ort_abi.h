/* The part of onnxruntime's C ABI that qsimd's custom-op library uses, declared here so that
 * building it needs no onnxruntime header (onnxruntime's PyPI wheel ships none, and no build
 * may download one).
 *
 * Why this is safe: onnxruntime keeps its C ABI stable across releases. OrtApi is a table of
 * function pointers that only ever grows at its end (a function keeps its position for good),
 * and OrtCustomOp is a struct whose fields only grow at its end; its `version` field tells
 * onnxruntime how many of them the library filled in. So positions and offsets learnt from one
 * release hold for every later one. tests/c/ort_abi_check.c compiles against a real
 * onnxruntime_c_api.h (tests/test_ort.py takes onnxruntime 1.17's from the amd-quark wheel
 * when it can) and asserts every position, offset, size and function type used here.
 *
 * Minimum onnxruntime: 1.16 (C API 16: CreateKernelV2 / KernelComputeV2, which let a kernel
 * return its errors as an OrtStatus). With 1.17 or later (C API 17) the kernels also split
 * large tensors over the session's intra-op threads (KernelContext_ParallelFor).
 *
 * Only opaque onnxruntime types are named (struct OrtStatus and so on, never defined); every
 * other name is qsimd's own (qo_*), so this header and onnxruntime's can share a file. */
#ifndef QSIMD_ORT_ABI_H
#define QSIMD_ORT_ABI_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && !defined(_WIN64)
#define QO_CALL __stdcall   /* onnxruntime's ORT_API_CALL (32-bit Windows only) */
#else
#define QO_CALL
#endif

#define QO_API_MIN 16        /* C API version the library needs (onnxruntime 1.16) */
#define QO_API_PARALLEL 17   /* ... and the one with KernelContext_ParallelFor */

struct OrtStatus;
struct OrtSessionOptions;
struct OrtCustomOpDomain;
struct OrtKernelInfo;
struct OrtKernelContext;
struct OrtValue;
struct OrtTensorTypeAndShapeInfo;
struct OrtShapeInferContext;

/* OrtErrorCode values */
enum { QO_ORT_FAIL = 1, QO_ORT_INVALID_ARGUMENT = 2, QO_ORT_NOT_IMPLEMENTED = 9 };
/* ONNXTensorElementDataType values: ONNX's TensorProto numbers (0 = undefined, any type) */
enum { QO_T_UNDEFINED = 0, QO_T_FLOAT = 1, QO_T_FLOAT16 = 10 };
/* OrtCustomOpInputOutputCharacteristic */
enum { QO_REQUIRED = 0 };

/* OrtApiBase: what RegisterCustomOps receives. */
typedef struct qo_api_base {
    const void *(QO_CALL *GetApi)(uint32_t version);   /* an OrtApi table, or NULL */
    const char *(QO_CALL *GetVersionString)(void);
} qo_api_base;

/* The OrtApi functions used, by position in the table. */
enum {
    QO_CreateStatus = 0,
    QO_CreateCustomOpDomain = 26,
    QO_CustomOpDomain_Add = 27,
    QO_AddCustomOpDomain = 28,
    QO_GetTensorMutableData = 51,
    QO_GetTensorElementType = 60,
    QO_GetDimensionsCount = 61,
    QO_GetDimensions = 62,
    QO_GetTensorTypeAndShape = 65,
    QO_KernelInfoGetAttribute_float = 85,
    QO_KernelInfoGetAttribute_int64 = 86,
    QO_KernelInfoGetAttribute_string = 87,
    QO_KernelContext_GetInputCount = 88,
    QO_KernelContext_GetInput = 90,
    QO_KernelContext_GetOutput = 91,
    QO_ReleaseStatus = 93,
    QO_ReleaseTensorTypeAndShapeInfo = 99,
    QO_KernelInfoGetAttributeArray_float = 162,
    QO_KernelInfoGetAttributeArray_int64 = 163,
    QO_HasSessionConfigEntry = 237,
    QO_GetSessionConfigEntry = 238,
    QO_KernelInfo_GetNodeName = 244,
    QO_KernelInfoGetConstantInput_tensor = 249,
    QO_KernelContext_ParallelFor = 274
};

/* Their types. */
typedef struct OrtStatus *(QO_CALL *qo_CreateStatus_fn)(int code, const char *msg);
typedef void (QO_CALL *qo_ReleaseStatus_fn)(struct OrtStatus *status);
typedef struct OrtStatus *(QO_CALL *qo_CreateCustomOpDomain_fn)(
    const char *domain, struct OrtCustomOpDomain **out);
struct qo_custom_op;
typedef struct OrtStatus *(QO_CALL *qo_CustomOpDomain_Add_fn)(
    struct OrtCustomOpDomain *domain, const struct qo_custom_op *op);
typedef struct OrtStatus *(QO_CALL *qo_AddCustomOpDomain_fn)(
    struct OrtSessionOptions *options, struct OrtCustomOpDomain *domain);
typedef struct OrtStatus *(QO_CALL *qo_GetTensorMutableData_fn)(struct OrtValue *value,
                                                                 void **out);
typedef struct OrtStatus *(QO_CALL *qo_GetTensorElementType_fn)(
    const struct OrtTensorTypeAndShapeInfo *info, int *out);   /* an enum: int-sized */
typedef struct OrtStatus *(QO_CALL *qo_GetDimensionsCount_fn)(
    const struct OrtTensorTypeAndShapeInfo *info, size_t *out);
typedef struct OrtStatus *(QO_CALL *qo_GetDimensions_fn)(
    const struct OrtTensorTypeAndShapeInfo *info, int64_t *dims, size_t length);
typedef struct OrtStatus *(QO_CALL *qo_GetTensorTypeAndShape_fn)(
    const struct OrtValue *value, struct OrtTensorTypeAndShapeInfo **out);
typedef struct OrtStatus *(QO_CALL *qo_KernelInfoGetAttribute_float_fn)(
    const struct OrtKernelInfo *info, const char *name, float *out);
typedef struct OrtStatus *(QO_CALL *qo_KernelInfoGetAttribute_int64_fn)(
    const struct OrtKernelInfo *info, const char *name, int64_t *out);
typedef struct OrtStatus *(QO_CALL *qo_KernelInfoGetAttribute_string_fn)(
    const struct OrtKernelInfo *info, const char *name, char *out, size_t *size);
typedef struct OrtStatus *(QO_CALL *qo_KernelInfoGetAttributeArray_float_fn)(
    const struct OrtKernelInfo *info, const char *name, float *out, size_t *size);
typedef struct OrtStatus *(QO_CALL *qo_KernelInfoGetAttributeArray_int64_fn)(
    const struct OrtKernelInfo *info, const char *name, int64_t *out, size_t *size);
typedef struct OrtStatus *(QO_CALL *qo_KernelContext_GetInputCount_fn)(
    const struct OrtKernelContext *context, size_t *out);
typedef struct OrtStatus *(QO_CALL *qo_KernelContext_GetInput_fn)(
    const struct OrtKernelContext *context, size_t index, const struct OrtValue **out);
typedef struct OrtStatus *(QO_CALL *qo_KernelContext_GetOutput_fn)(
    struct OrtKernelContext *context, size_t index, const int64_t *dims, size_t ndims,
    struct OrtValue **out);
typedef void (QO_CALL *qo_ReleaseTensorTypeAndShapeInfo_fn)(
    struct OrtTensorTypeAndShapeInfo *info);
typedef struct OrtStatus *(QO_CALL *qo_HasSessionConfigEntry_fn)(
    const struct OrtSessionOptions *options, const char *key, int *out);
typedef struct OrtStatus *(QO_CALL *qo_GetSessionConfigEntry_fn)(
    const struct OrtSessionOptions *options, const char *key, char *value, size_t *size);
typedef struct OrtStatus *(QO_CALL *qo_KernelInfo_GetNodeName_fn)(
    const struct OrtKernelInfo *info, char *out, size_t *size);
typedef struct OrtStatus *(QO_CALL *qo_KernelInfoGetConstantInput_tensor_fn)(
    const struct OrtKernelInfo *info, size_t index, int *is_constant,
    const struct OrtValue **out);
typedef struct OrtStatus *(QO_CALL *qo_KernelContext_ParallelFor_fn)(
    const struct OrtKernelContext *context, void (*fn)(void *, size_t), size_t total,
    size_t num_batch, void *user_data);

/* A function of the table by its position: QO_FN(api, GetDimensions)(...). */
typedef void (*qo_any_fn)(void);
#define QO_FN(api, name) ((qo_##name##_fn)((const qo_any_fn *)(api))[QO_##name])

/* OrtCustomOp, the fields of C API 17 (onnxruntime reads those up to `version`'s). */
typedef struct qo_custom_op {
    uint32_t version;
    void *(QO_CALL *CreateKernel)(const struct qo_custom_op *op, const void *api,
                                  const struct OrtKernelInfo *info);
    const char *(QO_CALL *GetName)(const struct qo_custom_op *op);
    const char *(QO_CALL *GetExecutionProviderType)(const struct qo_custom_op *op);
    int (QO_CALL *GetInputType)(const struct qo_custom_op *op, size_t index);
    size_t (QO_CALL *GetInputTypeCount)(const struct qo_custom_op *op);
    int (QO_CALL *GetOutputType)(const struct qo_custom_op *op, size_t index);
    size_t (QO_CALL *GetOutputTypeCount)(const struct qo_custom_op *op);
    void (QO_CALL *KernelCompute)(void *kernel, struct OrtKernelContext *context);
    void (QO_CALL *KernelDestroy)(void *kernel);
    int (QO_CALL *GetInputCharacteristic)(const struct qo_custom_op *op, size_t index);
    int (QO_CALL *GetOutputCharacteristic)(const struct qo_custom_op *op, size_t index);
    int (QO_CALL *GetInputMemoryType)(const struct qo_custom_op *op, size_t index);
    int (QO_CALL *GetVariadicInputMinArity)(const struct qo_custom_op *op);
    int (QO_CALL *GetVariadicInputHomogeneity)(const struct qo_custom_op *op);
    int (QO_CALL *GetVariadicOutputMinArity)(const struct qo_custom_op *op);
    int (QO_CALL *GetVariadicOutputHomogeneity)(const struct qo_custom_op *op);
    struct OrtStatus *(QO_CALL *CreateKernelV2)(const struct qo_custom_op *op, const void *api,
                                                const struct OrtKernelInfo *info,
                                                void **kernel);
    struct OrtStatus *(QO_CALL *KernelComputeV2)(void *kernel,
                                                 struct OrtKernelContext *context);
    struct OrtStatus *(QO_CALL *InferOutputShapeFn)(const struct qo_custom_op *op,
                                                    struct OrtShapeInferContext *ctx);
    int (QO_CALL *GetStartVersion)(const struct qo_custom_op *op);
    int (QO_CALL *GetEndVersion)(const struct qo_custom_op *op);
} qo_custom_op;

#endif
