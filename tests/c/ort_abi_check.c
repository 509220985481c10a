/* Checks csrc/ort/ort_abi.h (qsimd's own declaration of the onnxruntime C ABI it uses)
 * against a real onnxruntime_c_api.h: every OrtApi position, every OrtCustomOp offset and the
 * struct's size, the OrtApiBase layout, the enum values, and (by assignment, which fails to
 * compile under -Werror on a mismatch) the type of every function pointer whose parameters
 * name no onnxruntime enum or struct that qsimd's header spells differently.
 *   cc -std=c99 -Werror -Wall -I<onnxruntime include dir> -Icsrc/ort ort_abi_check.c
 * tests/test_ort.py compiles and runs it (onnxruntime 1.17's header from the amd-quark wheel);
 * a position or offset that differs fails to compile (negative array size), so running it
 * only prints what was checked. */
#include <stddef.h>
#include <stdio.h>

#include "onnxruntime_c_api.h"
#include "ort_abi.h"

#define CHECK(name, cond) typedef char check_##name[(cond) ? 1 : -1]
#define POS(f) CHECK(pos_##f, offsetof(OrtApi, f) == QO_##f * sizeof(void *))
#define OFF(f) CHECK(off_##f, offsetof(OrtCustomOp, f) == offsetof(qo_custom_op, f))

POS(CreateStatus);
POS(CreateCustomOpDomain);
POS(CustomOpDomain_Add);
POS(AddCustomOpDomain);
POS(GetTensorMutableData);
POS(GetTensorElementType);
POS(GetDimensionsCount);
POS(GetDimensions);
POS(GetTensorTypeAndShape);
POS(KernelInfoGetAttribute_float);
POS(KernelInfoGetAttribute_int64);
POS(KernelInfoGetAttribute_string);
POS(KernelContext_GetInputCount);
POS(KernelContext_GetInput);
POS(KernelContext_GetOutput);
POS(ReleaseStatus);
POS(ReleaseTensorTypeAndShapeInfo);
POS(KernelInfoGetAttributeArray_float);
POS(KernelInfoGetAttributeArray_int64);
POS(HasSessionConfigEntry);
POS(GetSessionConfigEntry);
POS(KernelInfo_GetNodeName);
POS(KernelInfoGetConstantInput_tensor);
POS(KernelContext_ParallelFor);

OFF(version);
OFF(CreateKernel);
OFF(GetName);
OFF(GetExecutionProviderType);
OFF(GetInputType);
OFF(GetInputTypeCount);
OFF(GetOutputType);
OFF(GetOutputTypeCount);
OFF(KernelCompute);
OFF(KernelDestroy);
OFF(GetInputCharacteristic);
OFF(GetOutputCharacteristic);
OFF(GetInputMemoryType);
OFF(GetVariadicInputMinArity);
OFF(GetVariadicInputHomogeneity);
OFF(GetVariadicOutputMinArity);
OFF(GetVariadicOutputHomogeneity);
OFF(CreateKernelV2);
OFF(KernelComputeV2);
OFF(InferOutputShapeFn);
OFF(GetStartVersion);
OFF(GetEndVersion);
CHECK(op_size, sizeof(OrtCustomOp) == sizeof(qo_custom_op));
CHECK(base_getapi, offsetof(OrtApiBase, GetApi) == offsetof(qo_api_base, GetApi));
CHECK(base_version, offsetof(OrtApiBase, GetVersionString) ==
                        offsetof(qo_api_base, GetVersionString));
CHECK(base_size, sizeof(OrtApiBase) == sizeof(qo_api_base));
/* the enums qsimd passes as int */
CHECK(enum_code, sizeof(OrtErrorCode) == sizeof(int));
CHECK(enum_type, sizeof(ONNXTensorElementDataType) == sizeof(int));
CHECK(enum_char, sizeof(OrtCustomOpInputOutputCharacteristic) == sizeof(int));
CHECK(enum_mem, sizeof(OrtMemType) == sizeof(int));
CHECK(fail, (int)ORT_FAIL == (int)QO_ORT_FAIL);
CHECK(invalid, (int)ORT_INVALID_ARGUMENT == (int)QO_ORT_INVALID_ARGUMENT);
CHECK(not_impl, (int)ORT_NOT_IMPLEMENTED == (int)QO_ORT_NOT_IMPLEMENTED);
CHECK(t_undef, (int)ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED == (int)QO_T_UNDEFINED);
CHECK(t_float, (int)ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT == (int)QO_T_FLOAT);
CHECK(t_half, (int)ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 == (int)QO_T_FLOAT16);
CHECK(required, (int)INPUT_OUTPUT_REQUIRED == (int)QO_REQUIRED);
CHECK(mem_default, OrtMemTypeDefault == 0);
CHECK(api_version, ORT_API_VERSION >= QO_API_PARALLEL);

/* Function types: each assignment is an error under -Werror=incompatible-pointer-types when
 * qsimd's declaration differs from onnxruntime's. */
#define TYPE(f) qo_##f##_fn t_##f = api->f; (void)t_##f
int check_types(const OrtApi *api);
int check_types(const OrtApi *api)
{
    TYPE(ReleaseStatus);
    TYPE(CreateCustomOpDomain);
    TYPE(AddCustomOpDomain);
    TYPE(GetTensorMutableData);
    TYPE(GetDimensionsCount);
    TYPE(GetDimensions);
    TYPE(GetTensorTypeAndShape);
    TYPE(KernelInfoGetAttribute_float);
    TYPE(KernelInfoGetAttribute_int64);
    TYPE(KernelInfoGetAttribute_string);
    TYPE(KernelInfoGetAttributeArray_float);
    TYPE(KernelInfoGetAttributeArray_int64);
    TYPE(KernelContext_GetInputCount);
    TYPE(KernelContext_GetInput);
    TYPE(KernelContext_GetOutput);
    TYPE(ReleaseTensorTypeAndShapeInfo);
    TYPE(HasSessionConfigEntry);
    TYPE(GetSessionConfigEntry);
    TYPE(KernelInfo_GetNodeName);
    TYPE(KernelInfoGetConstantInput_tensor);
    TYPE(KernelContext_ParallelFor);
    return 0;
}

int main(void)
{
    printf("ort_abi.h matches onnxruntime_c_api.h (C API %d): 23 positions, 22 offsets, "
           "20 function types\n", ORT_API_VERSION);
    return 0;
}
