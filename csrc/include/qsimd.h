/* qsimd: exact ONNX QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear in C.
 *
 * Python-free C99 API. All tensors are dense and C-contiguous (row-major); the library never
 * allocates or frees the caller's buffers (the one object it allocates for the caller is a
 * qsimd_prepared, freed with qsimd_prepared_free). y must not overlap x, scale or
 * zero_point (the Python layer computes into a temporary when `out=` overlaps an input). Every function is
 * thread-safe: the only global state is the instruction-set choice, made once (thread-safely)
 * on first use and changeable with qsimd_set_isa(), the default thread count, and the pool
 * of worker threads that calls split across threads use; the settings are process-wide and
 * may be changed while other threads run operations (a call in progress keeps the kernels
 * and thread count it started with, and results never depend on them).
 *
 * Numeric behaviour: bit-identical to the ONNX reference where that is defined, and to
 * qsimd's numeric contract (docs/CONTRACT.md) elsewhere (saturation by value, NaN -> qmin,
 * exact integer subtraction on dequantize), on every instruction set.
 */
#ifndef QSIMD_H
#define QSIMD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbol visibility. Building the shared library defines QSIMD_BUILDING_SHARED; Windows
 * programs linking the DLL (not the static library) define QSIMD_SHARED. */
#if defined(_WIN32) && defined(QSIMD_BUILDING_SHARED)
#define QSIMD_API __declspec(dllexport)
#elif defined(_WIN32) && defined(QSIMD_SHARED)
#define QSIMD_API __declspec(dllimport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define QSIMD_API __attribute__((visibility("default")))
#else
#define QSIMD_API
#endif

#define QSIMD_VERSION_MAJOR 0
#define QSIMD_VERSION_MINOR 1
#define QSIMD_VERSION_PATCH 0
#define QSIMD_VERSION_STRING "0.1.0"

#define QSIMD_MAX_DIMS 32

/* Element types, numbered as ONNX TensorProto.DataType. */
typedef enum qsimd_dtype {
    QSIMD_FLOAT = 1,
    QSIMD_UINT8 = 2,
    QSIMD_INT8 = 3,
    QSIMD_UINT16 = 4,
    QSIMD_INT16 = 5,
    QSIMD_INT32 = 6,
    QSIMD_FLOAT16 = 10,
    QSIMD_UINT32 = 12,
    QSIMD_BFLOAT16 = 16,
    QSIMD_FLOAT8E4M3FN = 17,
    QSIMD_FLOAT8E4M3FNUZ = 18,
    QSIMD_FLOAT8E5M2 = 19,
    QSIMD_FLOAT8E5M2FNUZ = 20,
    QSIMD_UINT4 = 21,
    QSIMD_INT4 = 22,
    QSIMD_FLOAT4E2M1 = 23,
    QSIMD_FLOAT8E8M0 = 24,
    QSIMD_UINT2 = 25,
    QSIMD_INT2 = 26,
    QSIMD_FLOAT6E2M3 = 27,   /* opset 28 */
    QSIMD_FLOAT6E3M2 = 28
} qsimd_dtype;

typedef enum qsimd_status {
    QSIMD_OK = 0,
    QSIMD_ERR_TYPE = 1,         /* an unsupported dtype or dtype combination */
    QSIMD_ERR_VALUE = 2,        /* bad shape, axis, block size, zero point or output */
    QSIMD_ERR_NOMEM = 3,        /* a parameter buffer could not be allocated */
    QSIMD_ERR_UNAVAILABLE = 4   /* an instruction set this CPU cannot run */
} qsimd_status;

/* Filled on failure when the caller passes one; may be NULL. The message names the argument
 * at fault as the Python API does (y's type is "output_dtype", ONNX's attribute), what was
 * expected and the offending value or shapes: the Python package raises these messages. */
typedef struct qsimd_error {
    int code;
    char message[256];
} qsimd_error;

/* A dense, C-contiguous tensor.
 * Sub-byte types (int4, uint4, int2, uint2, float4e2m1, float6e2m3, float6e3m2): with
 * packed = 0 one element per byte, code in the low bits (the ml_dtypes layout); with
 * packed = 1 the ONNX raw layout, element 0 in the lowest bits, ceil(n/2), ceil(n/4) or (6-bit:
 * 4 codes in 3 bytes) ceil(n*6/8) bytes, zero padding. */
typedef struct qsimd_tensor {
    void *data;
    int32_t dtype;          /* qsimd_dtype */
    int32_t ndim;           /* 0 .. QSIMD_MAX_DIMS */
    const int64_t *shape;   /* ndim entries, each >= 0; may be NULL when ndim == 0 (else
                               QSIMD_ERR_VALUE) */
    int32_t packed;
} qsimd_tensor;

typedef struct qsimd_quantize_options {
    int64_t axis;           /* ONNX default 1; negative counts from the back */
    int64_t block_size;     /* 0 = per-tensor / per-axis */
    int32_t saturate;       /* 0 or 1, for float8 outputs; ONNX default 1 */
    int32_t precision;      /* 0 = by the types (docs/CONTRACT.md rule 1), else FLOAT,
                               FLOAT16 or BFLOAT16 */
    int32_t num_threads;    /* 0 = the process default (qsimd_set_num_threads), else 1..64 */
} qsimd_quantize_options;

typedef struct qsimd_dequantize_options {
    int64_t axis;
    int64_t block_size;
    int32_t num_threads;    /* 0 = the process default, else 1..64 */
} qsimd_dequantize_options;

/* Defaults matching the ONNX attribute defaults (axis 1, block_size 0, saturate 1), and
 * num_threads 0. */
QSIMD_API void qsimd_quantize_options_init(qsimd_quantize_options *opt);
QSIMD_API void qsimd_dequantize_options_init(qsimd_dequantize_options *opt);

/* QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point).
 *   x           FLOAT, FLOAT16, BFLOAT16 or INT32.
 *   scale       FLOAT, FLOAT16, BFLOAT16, INT32 or FLOAT8E8M0: one element (per-tensor),
 *               1-D of length x.shape[axis] (per-axis), or x's shape with ceil(D / block_size)
 *               entries along axis (blocked).
 *   zero_point  NULL, or scale's shape (one element each also matches) and y's dtype.
 *   opt         NULL for the defaults.
 *   y           x's shape; y->dtype is the output type:
 *               - UINT8, INT8, UINT16, INT16, UINT4, INT4, UINT2, INT2; y->packed selects the
 *                 ONNX raw layout for 4/2-bit types;
 *               - FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ: x / scale rounded
 *                 to nearest even, the zero point ignored; opt->saturate 1 clips to the finite
 *                 range, 0 turns values that round past it into inf (E5M2) or NaN;
 *               - FLOAT4E2M1 (packed or one per byte): x / scale + zero_point (in float),
 *                 rounded to nearest even, saturating at +-6; FLOAT6E2M3 and FLOAT6E3M2
 *                 (opset 28) likewise, saturating at +-7.5 and +-28, NaN -> the zero of
 *                 the opposite sign;
 *               - AMD Quark: INT32, UINT32 (as the integer types, clamped in double), FLOAT16,
 *                 BFLOAT16 (x / scale + zero_point in float32, rounded to nearest even, not to
 *                 an integer).
 *               Float results have ml_dtypes' bit patterns.
 * Returns QSIMD_OK, or an error code with err->message naming the argument at fault
 * (QSIMD_ERR_VALUE for opt->saturate other than 0 or 1).
 * Nothing is written to y on a validation error. */
QSIMD_API int qsimd_quantize_linear(const qsimd_tensor *x, const qsimd_tensor *scale,
                                    const qsimd_tensor *zero_point,
                                    const qsimd_quantize_options *opt, const qsimd_tensor *y,
                                    qsimd_error *err);

/* DequantizeLinear: y = (x - zero_point) * scale. The subtraction is exact (int64), the
 * difference is rounded once to float32 and multiplied in float32, then rounded to y's dtype.
 *   x           UINT8, INT8, UINT16, INT16, INT32, UINT32, UINT4, INT4, UINT2, INT2
 *               (x->packed selects the ONNX raw layout for 4/2-bit types);
 *               FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ (zero point NULL or
 *               all +-0, else QSIMD_ERR_VALUE); FLOAT4E2M1, packed or not (zero point ignored);
 *               FLOAT6E2M3, FLOAT6E3M2, packed or not ((float32(x) - float32(zero_point)) *
 *               scale, as ONNX's reference);
 *               AMD Quark FLOAT16, BFLOAT16: (float32(x) - float32(zero_point)) * scale.
 *   scale       FLOAT, FLOAT16, BFLOAT16 or FLOAT8E8M0, shaped as for quantize.
 *   zero_point  NULL, or scale's shape and x's dtype.
 *   y           x's shape; dtype FLOAT, FLOAT16, BFLOAT16, or FLOAT8E8M0 (the float32
 *               product rounded as ml_dtypes does: what ONNX gives for an e8m0 scale). */
QSIMD_API int qsimd_dequantize_linear(const qsimd_tensor *x, const qsimd_tensor *scale,
                                      const qsimd_tensor *zero_point,
                                      const qsimd_dequantize_options *opt,
                                      const qsimd_tensor *y, qsimd_error *err);

/* DynamicQuantizeLinear: x FLOAT, y UINT8 of x's shape. The range ignores NaN elements;
 * *y_scale and *y_zero_point receive the ONNX scale and zero point. Empty x is an error. */
QSIMD_API int qsimd_dynamic_quantize_linear(const qsimd_tensor *x, const qsimd_tensor *y,
                                            float *y_scale, uint8_t *y_zero_point,
                                            qsimd_error *err);

/* Prepared parameters: the scale and zero point (and options) of a QuantizeLinear or
 * DequantizeLinear checked and copied once, for calls that reuse them (a server's model
 * inputs), with their entries converted once into the forms the kernels read (up to 16 MiB
 * more; runs whose x type reads other forms convert them per run, as the operator does).
 * The object is read-only once made: any number of threads may run it at once.
 * It is the one thing the library allocates for the caller: free it with
 * qsimd_prepared_free(). Later changes to the caller's scale / zero point buffers do not
 * affect it.
 *   qsimd_prepare_quantize    y_dtype / y_packed: the output type every run must use.
 *   qsimd_prepare_dequantize  the output type is the y of each run, as for the operator.
 * qsimd_prepared_run(p, x, y) equals qsimd_quantize_linear(x, scale, zero_point, opt, y)
 * (or the dequantize call) with the prepared arguments; x's shape is checked against them
 * on each run (QSIMD_ERR_VALUE, as the operator reports it). */
typedef struct qsimd_prepared qsimd_prepared;
QSIMD_API int qsimd_prepare_quantize(const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                                     int32_t y_dtype, int32_t y_packed,
                                     const qsimd_quantize_options *opt, qsimd_prepared **out,
                                     qsimd_error *err);
QSIMD_API int qsimd_prepare_dequantize(const qsimd_tensor *scale,
                                       const qsimd_tensor *zero_point,
                                       const qsimd_dequantize_options *opt,
                                       qsimd_prepared **out, qsimd_error *err);
QSIMD_API int qsimd_prepared_run(const qsimd_prepared *p, const qsimd_tensor *x,
                                 const qsimd_tensor *y, qsimd_error *err);
QSIMD_API void qsimd_prepared_free(qsimd_prepared *p);   /* NULL is fine */

/* A preprocessing chain in front of a prepared QuantizeLinear (an input boundary in one
 * pass): qsimd_prepare_quantize_chain makes an object whose run computes, for x of type
 * UINT8, INT8, UINT16, INT16, FLOAT16, BFLOAT16 or FLOAT,
 *     t = float32(x);  t = t OP c  for each op in order;  t = transpose(t, perm);
 *     y = QuantizeLinear(t, scale, zero_point, opt)   (axis etc. refer to the permuted t)
 * where every OP is one correctly rounded float32 operation (no fused multiply-add, no
 * reciprocal), exactly as NumPy's float32 arithmetic. A constant is one float32 (count 1) or
 * x.shape[pre_axis] of them (count > 1), broadcast along pre_axis of x; every per-channel
 * constant of a chain has the same count. perm lists, for each axis of y, the axis of x it
 * takes (np.transpose's argument); perm_len 0 (perm NULL) keeps x's layout, else perm_len
 * must be x's rank on each run. y has the permuted shape.
 * Integer inputs with output types of one element per byte, 16-bit or 32-bit outputs,
 * per-tensor or per-axis along the channel axis, run as a table lookup (the tables are the
 * chain and the quantization evaluated once on every input value: 8-bit inputs at prepare
 * time, 16-bit ones on the first run of that type); everything else computes the chain in
 * float32 over pieces of the tensor. Same results either way.
 * Errors (QSIMD_ERR_VALUE, the message naming the argument): an unknown kind, a count < 1,
 * per-channel constants of different counts or NULL values ("pre"); perm not a permutation
 * ("perm"); on a run, a count that is not x.shape[pre_axis] or pre_axis out of range
 * ("pre" / "pre_axis"), perm_len not x's rank ("perm"). A prepared object without a chain
 * (qsimd_prepare_quantize) behaves as before. */
typedef enum qsimd_pre_kind {
    QSIMD_PRE_ADD = 1,
    QSIMD_PRE_SUB = 2,      /* t - c */
    QSIMD_PRE_MUL = 3,
    QSIMD_PRE_DIV = 4       /* t / c */
} qsimd_pre_kind;
typedef struct qsimd_pre_op {
    int32_t kind;           /* qsimd_pre_kind */
    int64_t count;          /* 1: one constant for every element; else one per channel */
    const float *values;    /* count float32 values (copied) */
} qsimd_pre_op;
QSIMD_API int qsimd_prepare_quantize_chain(const qsimd_tensor *scale,
                                           const qsimd_tensor *zero_point, int32_t y_dtype,
                                           int32_t y_packed, const qsimd_quantize_options *opt,
                                           const qsimd_pre_op *ops, int32_t n_ops,
                                           int64_t pre_axis, const int64_t *perm,
                                           int32_t perm_len, qsimd_prepared **out,
                                           qsimd_error *err);

/* Dynamic quantization per group (per row / per token, or per block): every group of
 * block_size consecutive elements along `axis` (block_size 0: the whole axis) gets its own
 * scale and zero point from its NaN-ignoring range, then is quantized with them.
 *   asymmetric (symmetric = 0): DynamicQuantizeLinear's formulas for the output range
 *     [qmin, qmax]: M = max(0, max x), m = min(0, min x), scale = (M - m) / (qmax - qmin)
 *     in float32 (M == m: 1 / (qmax - qmin)), zp = round_half_even(clamp(qmin - m / scale,
 *     qmin, qmax)); for uint8 each group equals DynamicQuantizeLinear of that group alone.
 *   symmetric (int8 / int4 only): scale = max|x| / qmax in float32 (127 or 7; all zero or
 *     all NaN: 1 / qmax), zero point 0.
 * Then y = QuantizeLinear(x, scale, zp) per group (NaN -> qmin, docs/CONTRACT.md).
 *   x           FLOAT, rank >= 1, not empty.
 *   y           x's shape: UINT8, INT8, UINT4 or INT4 (one per byte, not packed).
 *   scale       FLOAT, x's shape with ceil(D / block_size) entries along axis (1 for whole-
 *               axis groups): what DequantizeLinear takes with block_size (D for whole-axis
 *               groups).
 *   zero_point  y's type, scale's shape; required unless symmetric (then NULL, or zeroed). */
typedef struct qsimd_dynamic_options {
    int64_t axis;           /* default -1 */
    int64_t block_size;     /* 0 = the whole axis */
    int32_t symmetric;      /* 0 or 1 */
    int32_t num_threads;    /* 0 = the process default, else 1..64 */
} qsimd_dynamic_options;
QSIMD_API void qsimd_dynamic_options_init(qsimd_dynamic_options *opt);
QSIMD_API int qsimd_dynamic_quantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                     const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                                     const qsimd_dynamic_options *opt, qsimd_error *err);

/* ---- MX and BFP: AMD Quark's fake quantization, and OCP MX in ONNX terms ----
 * x is viewed around `axis` as (outer, D, inner); every run of block_size consecutive
 * elements along the axis (the last run of each may be shorter) is one block, which shares
 * a power-of-two scale taken from the largest float32 exponent field in it (NaN and inf do
 * not count; an all-zero block uses field 0). The rules, bit for bit those of AMD Quark 0.13's
 * CPU ops (domain com.amd.quark) except where docs/API.md says otherwise, are documented with
 * qsimd.quark.mx_quantize_dequantize / bfp_quantize_dequantize (qsimd/quark.py).
 * opt NULL: the defaults; opt->num_threads 0 = the process default, else 1..64. Bad values
 * (an unknown element_dtype or bfp_method, an axis out of range, block_size outside
 * [1, 2^62], rounding_mode outside 0..2, ...) return QSIMD_ERR_VALUE with a message naming
 * the attribute, wrong tensor types QSIMD_ERR_TYPE; nothing is written on an error. */
typedef struct qsimd_mx_options {
    const char *element_dtype;  /* "int8" (default), "fp8_e4m3", "fp8_e5m2", "fp6_e3m2",
                                   "fp6_e2m3", "fp4_e2m1" (Quark's names); NULL = "int8" */
    int64_t axis;               /* default 1, negative counts from the back */
    int64_t block_size;         /* default 32 */
    int64_t rounding_mode;      /* default 0: half away from zero; 1 half up; 2 half to even
                                   (int8 elements only: float elements round half to even) */
    int32_t num_threads;        /* 0 = the process default */
} qsimd_mx_options;
QSIMD_API void qsimd_mx_options_init(qsimd_mx_options *opt);
/* Quark's MXQuantizeDequantize: x FLOAT, y FLOAT of x's shape (y may equal x: in place;
 * any other overlap is not allowed). Rank >= 1. */
QSIMD_API int qsimd_mx_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                           const qsimd_mx_options *opt, qsimd_error *err);

typedef struct qsimd_bfp_options {
    const char *bfp_method;     /* "to_bfp" (default; NULL too) or "to_bfp_prime" (also by
                                   Quark's older name "to_bfp_prime_shared") */
    int64_t axis;               /* default 1 */
    int64_t bit_width;          /* default 16; 10..32 (mantissa bits: bit_width - 9) */
    int64_t block_size;         /* default 8 */
    int64_t rounding_mode;      /* default 0; 0..2 as for MX */
    int64_t sub_block_size;     /* default 2; to_bfp_prime only: 1..2^62, dividing block_size */
    int64_t sub_block_shift_bits; /* default 1; to_bfp_prime only: 0..30 */
    int32_t convert_to_bfloat_before_bfp; /* default 0; nonzero: x rounded to bfloat16 first */
    int32_t num_threads;
} qsimd_bfp_options;
QSIMD_API void qsimd_bfp_options_init(qsimd_bfp_options *opt);
/* Quark's BFPQuantizeDequantize: x FLOAT, y FLOAT of x's shape (y may equal x). */
QSIMD_API int qsimd_bfp_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                            const qsimd_bfp_options *opt, qsimd_error *err);

/* OCP MX in ONNX terms: elements (x's shape; element type FLOAT8E4M3FN, FLOAT8E5M2,
 * FLOAT6E3M2, FLOAT6E2M3, FLOAT4E2M1 (packed or not) or INT8) and FLOAT8E8M0 scales
 * (x's shape with ceil(D / block_size) along axis), as qsimd.quantize_mx.
 * Each block's scale is 2^(e - 127 - emax), e its largest exponent field and emax the element
 * type's largest exponent (int8, 1.6 fixed point: 6), at least 2^-127; the elements are
 * QuantizeLinear(x, scales, axis, block_size) with saturate 1 (round half to even).
 * The element type is elements->dtype: opt->element_dtype and opt->rounding_mode are not
 * used. x FLOAT, rank >= 1; elements and scales must not overlap x or each other. */
QSIMD_API int qsimd_quantize_mx(const qsimd_tensor *x, const qsimd_tensor *elements,
                                const qsimd_tensor *scales, const qsimd_mx_options *opt,
                                qsimd_error *err);

/* Instruction sets: "scalar", "sse41", "avx2", "avx512" (x86-64), "neon" (aarch64).
 * The choice is process-wide; the environment variable QSIMD_ISA sets the first one. */
QSIMD_API const char *qsimd_get_isa(void);              /* the one in use */
QSIMD_API int qsimd_isa_available(const char *name);    /* 1 if this CPU can run it */
/* Force a set; NULL or "" selects the best available. QSIMD_ERR_VALUE for an unknown name,
 * QSIMD_ERR_UNAVAILABLE for one this CPU cannot run (the current choice is then kept). */
QSIMD_API int qsimd_set_isa(const char *name, qsimd_error *err);
/* Names of the instruction sets this build contains, NULL-terminated, slowest first. */
QSIMD_API const char *const *qsimd_isa_names(void);
/* What was wrong with the environment variable QSIMD_ISA (a name that is unknown or that this
 * CPU cannot run; the best available set is used instead), or NULL when it was fine or unset. */
QSIMD_API const char *qsimd_env_isa_error(void);

/* CPU features found at run time, as a bit set of QSIMD_CPU_*. */
enum {
    QSIMD_CPU_SSE41 = 1 << 0,
    QSIMD_CPU_AVX2 = 1 << 1,
    QSIMD_CPU_FMA = 1 << 2,
    QSIMD_CPU_F16C = 1 << 3,
    QSIMD_CPU_AVX512F = 1 << 4,
    QSIMD_CPU_AVX512BW = 1 << 5,
    QSIMD_CPU_AVX512DQ = 1 << 6,
    QSIMD_CPU_AVX512VL = 1 << 7,
    QSIMD_CPU_NEON = 1 << 8,
    QSIMD_CPU_FP16 = 1 << 9,      /* aarch64 half-precision arithmetic */
    QSIMD_CPU_OS_AVX = 1 << 10,   /* the OS saves YMM state */
    QSIMD_CPU_OS_AVX512 = 1 << 11 /* the OS saves ZMM / opmask state */
};
QSIMD_API unsigned qsimd_cpu_features(void);

/* Threads for large tensors, process-wide default (initially 1). A call splits its work only
 * when every thread gets at least 256K elements; results never depend on the thread count.
 * Returns QSIMD_ERR_VALUE unless 1 <= n <= 64. DynamicQuantizeLinear uses the default.
 * The extra threads come from a pool started on first use and kept (idle, blocked) for the
 * life of the process; after fork() the child starts a pool of its own. Do not unload the
 * shared library (dlclose) once a call has used more than one thread. */
QSIMD_API int qsimd_set_num_threads(int n);
QSIMD_API int qsimd_get_num_threads(void);

/* The library's version string (QSIMD_VERSION_STRING of the build). */
QSIMD_API const char *qsimd_version(void);

#ifdef __cplusplus
}
#endif
#endif
