/* libFuzzer harness for the qsimd C API.
 *
 * The input is decoded into one call of an operator (QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MX / BFP fake quantization, OCP MX quantize_mx) or of a
 * configuration function. Half of the decodings build a
 * consistent call (per-tensor / per-axis / blocked shapes, supported types) and then maybe
 * break one field; the rest take every field straight from the input: NULL tensors and
 * shapes, negative and huge dimensions, ranks outside 0..32, every dtype code and others.
 *
 * Every buffer (data and shape arrays) is a separate heap block of exactly the size its
 * tensor declares, so ASan reports any read or write past what the caller promised. Checked:
 *   - the status is OK or a documented error code, with err.code equal to it and a message;
 *   - a failed call left y (and quantize_mx's scales) untouched;
 *   - a successful call gives the same bytes (y, scale, zero point, scales) on every
 *     instruction set (in-place MX / BFP calls start from the same x each time).
 * Build (see .ci/fuzz.sh):
 *   clang -fsanitize=fuzzer,address,undefined -Icsrc/include fuzz_c_api.c libqsimd.a -lm
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qsimd.h"

#define CAP_ELEMS ((uint64_t)1 << 20)   /* tensors with more elements get NULL data (refused) */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned u8(reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static unsigned u16(reader *r) { unsigned a = u8(r); return a | u8(r) << 8; }

static uint32_t u32(reader *r) { uint32_t a = u16(r); return a | (uint32_t)u16(r) << 16; }

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_c_api: %s\n", what);
    abort();
}

/* -------------------------------------------------------------------- dtypes */
static const int32_t ALL_TYPES[] = {1, 2, 3, 4, 5, 6, 10, 12, 16, 17, 18, 19, 20, 21, 22, 23,
                                    24, 25, 26, 0, 7, 8, 9, 11, 13, 14, 15, 27, -1, 1000,
                                    INT32_MIN, INT32_MAX};
#define N_ALL (sizeof ALL_TYPES / sizeof ALL_TYPES[0])
static const int32_t Q_X[] = {QSIMD_FLOAT, QSIMD_FLOAT16, QSIMD_BFLOAT16, QSIMD_INT32};
static const int32_t Q_Y[] = {QSIMD_UINT8, QSIMD_INT8, QSIMD_UINT16, QSIMD_INT16,
                              QSIMD_UINT4, QSIMD_INT4, QSIMD_UINT2, QSIMD_INT2};
static const int32_t D_X[] = {QSIMD_UINT8, QSIMD_INT8, QSIMD_UINT16, QSIMD_INT16, QSIMD_INT32,
                              QSIMD_UINT32, QSIMD_UINT4, QSIMD_INT4, QSIMD_UINT2, QSIMD_INT2};
static const int32_t D_Y[] = {QSIMD_FLOAT, QSIMD_FLOAT16, QSIMD_BFLOAT16};
#define PICK(r, a) ((a)[u8(r) % (sizeof(a) / sizeof((a)[0]))])

static unsigned bits_of(int32_t t)
{
    switch (t) {
    case 25: case 26: return 2;
    case 21: case 22: case 23: return 4;
    case 27: case 28: return 6;
    case 2: case 3: case 17: case 18: case 19: case 20: case 24: return 8;
    case 4: case 5: case 10: case 16: return 16;
    case 1: case 6: case 12: return 32;
    default: return 0;   /* unknown: no bytes at all, so any access is reported */
    }
}

/* -------------------------------------------------------------------- tensors */
typedef struct tens {
    qsimd_tensor t;
    int64_t *shape;     /* heap, exactly max(ndim, 0) entries (NULL for none) */
    uint8_t *data;      /* heap, exactly `bytes` */
    size_t bytes;
    int present;
} tens;

/* Elements and bytes a tensor declares; 0 when its shape is invalid or too large to hold. */
static int declared_bytes(const tens *s, size_t *bytes)
{
    const qsimd_tensor *t = &s->t;
    if (t->ndim < 0 || t->ndim > QSIMD_MAX_DIMS || (t->ndim > 0 && !t->shape)) return 0;
    uint64_t n = 1;
    int zero = 0;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->shape[i];
        if (d < 0) return 0;
        if (d == 0) { zero = 1; continue; }
        if ((uint64_t)d > CAP_ELEMS || n * (uint64_t)d > CAP_ELEMS) return 0;
        n *= (uint64_t)d;
    }
    if (zero) n = 0;
    unsigned b = bits_of(t->dtype);
    *bytes = (size_t)(b < 8 ? (t->packed ? (n * b + 7) / 8 : n) : n * (b / 8));
    return 1;
}

static uint64_t rng_state;
static uint64_t next_rand(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);   /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Allocates shape and data for the declared tensor. Unrepresentable tensors get NULL data. */
static void materialise(tens *s, int null_shape, int null_data)
{
    int nd = s->t.ndim;
    if (nd > 0 && nd <= 64 && !null_shape) {
        int64_t *sh = (int64_t *)malloc((size_t)nd * sizeof(int64_t));
        if (!sh) fail("malloc");
        memcpy(sh, s->shape, (size_t)nd * sizeof(int64_t));
        free(s->shape);
        s->shape = sh;
        s->t.shape = sh;
    } else {
        free(s->shape);
        s->shape = NULL;
        s->t.shape = NULL;
    }
    size_t bytes = 0;
    s->data = NULL;
    s->bytes = 0;
    if (!null_data && declared_bytes(s, &bytes)) {
        s->data = (uint8_t *)malloc(bytes);   /* malloc(0): a block no access may touch */
        if (!s->data && bytes) fail("malloc");
        s->bytes = bytes;
        for (size_t i = 0; i < bytes; i += 8) {   /* 8 random bytes per draw */
            uint64_t v = next_rand();
            memcpy(s->data + i, &v, bytes - i < 8 ? bytes - i : 8);
        }
    }
    s->t.data = s->data;
}

static void release(tens *s)
{
    free(s->shape);
    free(s->data);
    memset(s, 0, sizeof *s);
}

/* A staging shape array, copied to a block of exactly ndim entries by materialise(). */
static int64_t *stage_shape(void)
{
    int64_t *sh = (int64_t *)calloc(64, sizeof(int64_t));
    if (!sh) fail("calloc");
    return sh;
}

static int64_t raw_dim(reader *r)
{
    static const int64_t special[] = {-1, -2, INT64_MIN, INT64_MAX, (int64_t)1 << 31,
                                      (int64_t)1 << 32, (int64_t)1 << 62, ((int64_t)1 << 61) + 1,
                                      (int64_t)(SIZE_MAX / 16), 4097, 65536};
    unsigned b = u8(r);
    if (b < 200) return b % 10;
    if (b < 230) return b % 70;
    if (b < 250) return special[b % (sizeof special / sizeof special[0])];
    return u16(r) % 5000;
}

static void raw_tensor(reader *r, tens *s)
{
    unsigned f = u8(r);
    s->present = (f & 7) != 0;
    s->t.dtype = (f & 8) ? (int32_t)u32(r) : ALL_TYPES[u8(r) % N_ALL];
    unsigned nb = u8(r);
    s->t.ndim = nb < 240 ? (int32_t)(nb % 6) : (int32_t)(nb % 40) - 3;   /* -3 .. 36 */
    s->shape = stage_shape();
    for (int i = 0; i < s->t.ndim && i < 64; i++) s->shape[i] = raw_dim(r);
    s->t.packed = (int32_t)(u8(r) % 3) - (f & 16 ? 7 : 0);
    materialise(s, (f & 0x60) == 0x60, (f & 0x80) && (f & 0x20));
}

/* x's shape for a consistent call: rank 0..4, small dims, sometimes one large dim (threads). */
static void consistent_x(reader *r, tens *x, int32_t dtype)
{
    x->present = 1;
    x->t.dtype = dtype;
    x->t.ndim = (int32_t)(u8(r) % 5);
    x->shape = stage_shape();
    for (int i = 0; i < x->t.ndim; i++) {
        unsigned b = u8(r);
        x->shape[i] = b < 240 ? b % 10 : (b < 250 ? 1 + b % 70 : 1 + b % 17);
    }
    /* enough elements for two threads (256K each); a magic value keeps it rare, as each
     * such call costs ~100 ms under the sanitizers */
    if (x->t.ndim && u16(r) == 0xBEEF) x->shape[0] = 600001;
}

/* scale / zero point shapes for x: 0 per-tensor, 1 per-axis, 2 blocked. */
static void param_shape(reader *r, const tens *x, tens *p, int gran, int64_t *axis,
                        int64_t *block)
{
    int nd = x->t.ndim;
    p->shape = stage_shape();
    *block = 0;
    if (gran == 0 || nd == 0) {
        p->t.ndim = (int32_t)(u8(r) % 2);
        p->shape[0] = 1;
        return;
    }
    int a = (int)(u8(r) % (unsigned)nd);
    *axis = u8(r) & 1 ? a - nd : a;
    if (gran == 1) {
        p->t.ndim = 1;
        p->shape[0] = x->shape[a];
        return;
    }
    int64_t d = x->shape[a];
    *block = 1 + (int64_t)(u8(r) % (unsigned)(d + 2 > 255 ? 255 : d + 2));
    p->t.ndim = nd;
    for (int i = 0; i < nd; i++) p->shape[i] = x->shape[i];
    p->shape[a] = (d + *block - 1) / *block;
}

/* -------------------------------------------------------------------- checks */
static void check_error(int rc, const qsimd_error *err)
{
    if (rc != QSIMD_ERR_TYPE && rc != QSIMD_ERR_VALUE && rc != QSIMD_ERR_NOMEM)
        fail("unexpected status");
    if (err->code != rc) fail("err.code differs from the status");
    if (err->message[0] == '\0') fail("empty error message");
    if (memchr(err->message, '\0', sizeof err->message) == NULL) fail("unterminated message");
}

enum { OP_Q, OP_DQ, OP_DYN, OP_MX, OP_BFP, OP_QMX, N_OPS };

/* An in-place MX / BFP call passes x's descriptor as y. */
static int call_op(int op, const tens *x, const tens *s, const tens *z, const tens *y,
                   const void *opt, float *ys, uint8_t *yz, int in_place, qsimd_error *err)
{
    const qsimd_tensor *px = x->present ? &x->t : NULL, *ps = s->present ? &s->t : NULL;
    const qsimd_tensor *pz = z->present ? &z->t : NULL, *py = y->present ? &y->t : NULL;
    switch (op) {
    case OP_Q:
        return qsimd_quantize_linear(px, ps, pz, (const qsimd_quantize_options *)opt, py, err);
    case OP_DQ:
        return qsimd_dequantize_linear(px, ps, pz, (const qsimd_dequantize_options *)opt, py,
                                       err);
    case OP_MX:
        return qsimd_mx_quantize_dequantize(px, in_place ? px : py,
                                            (const qsimd_mx_options *)opt, err);
    case OP_BFP:
        return qsimd_bfp_quantize_dequantize(px, in_place ? px : py,
                                             (const qsimd_bfp_options *)opt, err);
    case OP_QMX:   /* elements in y, scales in s */
        return qsimd_quantize_mx(px, py, ps, (const qsimd_mx_options *)opt, err);
    default:
        return qsimd_dynamic_quantize_linear(px, py, ys, yz, err);
    }
}

/* What a failing call was, on stderr, so that a crash report can be read without a debugger. */
static void describe_tensor(const char *name, const tens *t)
{
    fprintf(stderr, "  %s: %s dtype %d ndim %d packed %d shape", name,
            t->present ? "present" : "absent", (int)t->t.dtype, (int)t->t.ndim, (int)t->t.packed);
    for (int i = 0; i < t->t.ndim && i < 8 && t->t.shape; i++)
        fprintf(stderr, " %lld", (long long)t->t.shape[i]);
    fprintf(stderr, " (%zu bytes)", t->bytes);
    for (size_t i = 0; i < t->bytes && i < 16; i++) fprintf(stderr, " %02x", t->data[i]);
    fprintf(stderr, "\n");
}

static void describe(int op, const tens *x, const tens *s, const tens *z, const tens *y,
                     const void *opt)
{
    fprintf(stderr, "fuzz_c_api: op %d\n", op);
    describe_tensor("x", x); describe_tensor("scale", s);
    describe_tensor("zero_point", z); describe_tensor("y", y);
    if (opt && op == 0) {
        const qsimd_quantize_options *q = (const qsimd_quantize_options *)opt;
        fprintf(stderr, "  axis %lld block %lld saturate %d precision %d threads %d\n",
                (long long)q->axis, (long long)q->block_size, (int)q->saturate,
                (int)q->precision, (int)q->num_threads);
    } else if (opt && op == 1) {
        const qsimd_dequantize_options *q = (const qsimd_dequantize_options *)opt;
        fprintf(stderr, "  axis %lld block %lld threads %d\n", (long long)q->axis,
                (long long)q->block_size, (int)q->num_threads);
    } else if (opt && (op == OP_MX || op == OP_QMX)) {
        const qsimd_mx_options *q = (const qsimd_mx_options *)opt;
        fprintf(stderr, "  element_dtype %s axis %lld block %lld rounding %lld threads %d\n",
                q->element_dtype ? q->element_dtype : "(NULL)", (long long)q->axis,
                (long long)q->block_size, (long long)q->rounding_mode, (int)q->num_threads);
    } else if (opt && op == OP_BFP) {
        const qsimd_bfp_options *q = (const qsimd_bfp_options *)opt;
        fprintf(stderr, "  method %s axis %lld bits %lld block %lld rounding %lld sub %lld "
                "shift %lld bfloat %d threads %d\n", q->bfp_method ? q->bfp_method : "(NULL)",
                (long long)q->axis, (long long)q->bit_width, (long long)q->block_size,
                (long long)q->rounding_mode, (long long)q->sub_block_size,
                (long long)q->sub_block_shift_bits, (int)q->convert_to_bfloat_before_bfp,
                (int)q->num_threads);
    }
}

/* A copy of an output's bytes (NULL when it has none). */
static uint8_t *save(const tens *t)
{
    if (!t->bytes) return NULL;
    uint8_t *c = (uint8_t *)malloc(t->bytes);
    if (!c) fail("malloc");
    memcpy(c, t->data, t->bytes);
    return c;
}

static void same_bytes(const tens *t, const uint8_t *want, const char *what, int op,
                       const tens *x, const tens *s, const tens *z, const tens *y,
                       const void *opt, const char *isa_a, const char *isa_b)
{
    if (!t->bytes || memcmp(want, t->data, t->bytes) == 0) return;
    size_t k = 0;
    while (want[k] == t->data[k]) k++;
    describe(op, x, s, z, y, opt);
    fprintf(stderr, "  %s byte %zu: %s gives %02x, %s gives %02x\n", what, k, isa_a, want[k],
            isa_b, t->data[k]);
    fail("ISAs disagree");
}

/* y is the output (in place: x itself); quantize_mx writes s (its scales) too. */
static void run_op(int op, tens *x, tens *s, tens *z, tens *y, const void *opt, int null_outs,
                   int in_place)
{
    qsimd_error err;
    float ys = -1.0f;
    uint8_t yz = 77;
    tens *out = in_place ? x : y, *out2 = op == OP_QMX ? s : NULL;
    uint8_t *before = save(out), *before2 = out2 ? save(out2) : NULL;
    memset(&err, 0, sizeof err);
    int rc = call_op(op, x, s, z, y, opt, null_outs ? NULL : &ys, null_outs ? NULL : &yz,
                     in_place, &err);
    if (rc != QSIMD_OK) {
        check_error(rc, &err);
        if (before && memcmp(before, out->data, out->bytes) != 0) fail("y written on error");
        if (before2 && memcmp(before2, out2->data, out2->bytes) != 0)
            fail("scales written on error");
        free(before);
        free(before2);
        return;
    }
    /* the same call on every instruction set gives the same bytes */
    const char *const *names = qsimd_isa_names();
    const char *current = qsimd_get_isa();
    uint8_t *first = save(out), *first2 = out2 ? save(out2) : NULL;
    for (int i = 0; names[i]; i++) {
        if (!qsimd_isa_available(names[i]) || strcmp(names[i], current) == 0) continue;
        if (qsimd_set_isa(names[i], NULL) != QSIMD_OK) fail("set_isa of an available ISA");
        if (before) memcpy(out->data, before, out->bytes);   /* in place: x again */
        if (before2) memcpy(out2->data, before2, out2->bytes);
        float ys2 = -2.0f;
        uint8_t yz2 = 78;
        int rc2 = call_op(op, x, s, z, y, opt, &ys2, &yz2, in_place, &err);
        if (rc2 != QSIMD_OK) fail("an ISA refused a call another accepted");
        same_bytes(out, first, "y", op, x, s, z, y, opt, current, names[i]);
        if (out2) same_bytes(out2, first2, "scales", op, x, s, z, y, opt, current, names[i]);
        if (op == OP_DYN && (memcmp(&ys, &ys2, sizeof ys) != 0 || yz != yz2))
            fail("ISAs disagree on the dynamic scale / zero point");
    }
    if (qsimd_set_isa(current, NULL) != QSIMD_OK) fail("restoring the ISA");
    free(first);
    free(first2);
    free(before);
    free(before2);
}

static void config_calls(reader *r)
{
    static const char *const names[] = {"scalar", "sse41", "avx2", "avx512", "neon", "", "auto",
                                        "AVX2", "scalar ", "x", NULL};
    char buf[300];
    unsigned k = u8(r);
    const char *name;
    if (k < 200) {
        name = names[k % (sizeof names / sizeof names[0])];
    } else {   /* bytes from the input, any length up to 299, NUL-terminated */
        size_t len = u8(r) + (k & 1 ? 44 : 0);
        if (len >= sizeof buf) len = sizeof buf - 1;
        for (size_t i = 0; i < len; i++) buf[i] = (char)u8(r);
        buf[len] = '\0';
        name = buf;
    }
    const char *before = qsimd_get_isa();
    qsimd_error err;
    memset(&err, 0, sizeof err);
    int rc = qsimd_set_isa(name, u8(r) & 1 ? &err : NULL);
    if (rc == QSIMD_OK) {
        if (!qsimd_isa_available(qsimd_get_isa())) fail("set_isa chose an unavailable ISA");
    } else {
        if (rc != QSIMD_ERR_VALUE && rc != QSIMD_ERR_UNAVAILABLE) fail("set_isa status");
        if (strcmp(before, qsimd_get_isa()) != 0) fail("a failed set_isa changed the ISA");
    }
    (void)qsimd_isa_available(name);
    int n = (int)(int32_t)u32(r);
    int t0 = qsimd_get_num_threads();
    rc = qsimd_set_num_threads(n);
    if ((rc == QSIMD_OK) != (n >= 1 && n <= 64)) fail("set_num_threads range");
    if (rc != QSIMD_OK && qsimd_get_num_threads() != t0) fail("failed set_num_threads changed it");
    if (qsimd_get_num_threads() < 1 || qsimd_get_num_threads() > 64) fail("num_threads range");
    (void)qsimd_cpu_features();
    if (strcmp(qsimd_version(), QSIMD_VERSION_STRING) != 0) fail("version");
}

/* -------------------------------------------------------------------- MX / BFP */
static const char *const MX_NAMES[] = {"int8", "fp8_e4m3", "fp8_e5m2", "fp6_e3m2", "fp6_e2m3",
                                       "fp4_e2m1", NULL, "fp8", "", "INT8", "int8 ",
                                       "\xff\xfe"};
static const char *const BFP_NAMES[] = {"to_bfp", "to_bfp_prime", "to_bfp_prime_shared", NULL,
                                        "to_bfp_bad", "", "TO_BFP"};
static const int32_t MX_ELEMENTS[] = {QSIMD_FLOAT8E4M3FN, QSIMD_FLOAT8E5M2, QSIMD_FLOAT6E3M2,
                                      QSIMD_FLOAT6E2M3, QSIMD_FLOAT4E2M1, QSIMD_INT8};
#define N_MX_NAMES (sizeof MX_NAMES / sizeof MX_NAMES[0])
#define N_BFP_NAMES (sizeof BFP_NAMES / sizeof BFP_NAMES[0])

static int64_t raw_attr(reader *r)
{
    static const int64_t special[] = {0, -1, 1, 2, 3, 31, 32, 33, INT64_MIN, INT64_MAX,
                                      (int64_t)1 << 62, ((int64_t)1 << 62) + 1, -((int64_t)1 << 62)};
    unsigned b = u8(r);
    if (b < 128) return (int64_t)(b % 40) - 4;
    return special[b % (sizeof special / sizeof special[0])];
}

/* One MX / BFP / quantize_mx call: structured (a consistent call, maybe with one thing
 * broken) or raw (every field from the input). x in x, the output in y (quantize_mx: the
 * elements; its scales in s). */
static void mx_input(reader *r, int op, int structured, tens *x, tens *s, tens *y)
{
    qsimd_mx_options mo;
    qsimd_bfp_options bo;
    tens z;
    memset(&z, 0, sizeof z);
    qsimd_mx_options_init(&mo);
    qsimd_bfp_options_init(&bo);
    int null_opt = 0, in_place = 0;
    if (structured) {
        consistent_x(r, x, QSIMD_FLOAT);
        int nd = x->t.ndim, a = nd ? (int)(u8(r) % (unsigned)nd) : 0;
        int64_t axis = nd && (u8(r) & 1) ? a - nd : a, d = nd ? x->shape[a] : 1;
        int64_t block = 1 + (int64_t)(u8(r) % (unsigned)(d + 33 > 255 ? 255 : d + 33));
        mo.element_dtype = MX_NAMES[u8(r) % 6];
        mo.axis = bo.axis = axis;
        mo.block_size = bo.block_size = block;
        mo.rounding_mode = bo.rounding_mode = (int64_t)(u8(r) % 3);
        static const int32_t threads[] = {0, 0, 0, 1, 2, 3, 8, 64};
        mo.num_threads = bo.num_threads = PICK(r, threads);
        bo.bfp_method = BFP_NAMES[u8(r) % 3];
        bo.bit_width = 10 + (int64_t)(u8(r) % 23);
        bo.sub_block_size = 1;   /* a divisor of the block */
        for (int64_t k = 1 + (int64_t)(u8(r) % 8); k > 1; k--)
            if (block % k == 0) { bo.sub_block_size = k; break; }
        bo.sub_block_shift_bits = (int64_t)(u8(r) % 9);
        bo.convert_to_bfloat_before_bfp = (int32_t)(u8(r) % 3) - 1;
        in_place = op != OP_QMX && (u8(r) & 3) == 0;
        y->present = 1;
        y->t.dtype = op == OP_QMX ? PICK(r, MX_ELEMENTS) : QSIMD_FLOAT;
        y->t.ndim = x->t.ndim;
        y->shape = stage_shape();
        memcpy(y->shape, x->shape, 64 * sizeof(int64_t));
        y->t.packed = op == OP_QMX ? (int32_t)(u8(r) & 1) : 0;
        s->present = op == OP_QMX;
        s->t.dtype = QSIMD_FLOAT8E8M0;
        s->t.ndim = x->t.ndim;
        s->shape = stage_shape();
        memcpy(s->shape, x->shape, 64 * sizeof(int64_t));
        if (nd) s->shape[a] = (d + block - 1) / block;
        /* maybe break one thing */
        unsigned m = u8(r);
        tens *victim = m % 3 == 0 ? x : m % 3 == 1 ? y : s;
        switch (m < 128 ? 99 : m % 12) {
        case 0: victim->t.dtype = ALL_TYPES[u8(r) % N_ALL]; break;
        case 1: victim->t.ndim = (int32_t)(u8(r) % 40) - 3; break;
        case 2: if (victim->t.ndim > 0) victim->shape[u8(r) % (unsigned)victim->t.ndim] = raw_dim(r); break;
        case 3: mo.axis = bo.axis = raw_attr(r); break;
        case 4: mo.block_size = bo.block_size = raw_attr(r); break;
        case 5: mo.rounding_mode = bo.rounding_mode = raw_attr(r); break;
        case 6: mo.element_dtype = MX_NAMES[u8(r) % N_MX_NAMES];
                bo.bfp_method = BFP_NAMES[u8(r) % N_BFP_NAMES]; break;
        case 7: bo.bit_width = raw_attr(r); bo.sub_block_size = raw_attr(r);
                bo.sub_block_shift_bits = raw_attr(r); break;
        case 8: mo.num_threads = bo.num_threads = (int32_t)u32(r); break;
        case 9: victim->present = 0; break;
        case 10: null_opt = 1; break;
        default: victim->t.packed = (int32_t)u32(r); break;
        }
        unsigned nulls = u8(r);
        int null_shape = nulls >= 250, null_data = nulls >= 240 && nulls < 250;
        materialise(x, null_shape && victim == x, null_data && victim == x);
        materialise(y, null_shape && victim == y, null_data && victim == y);
        materialise(s, null_shape && victim == s, null_data && victim == s);
    } else {
        raw_tensor(r, x);
        raw_tensor(r, y);
        raw_tensor(r, s);
        mo.element_dtype = MX_NAMES[u8(r) % N_MX_NAMES];
        bo.bfp_method = BFP_NAMES[u8(r) % N_BFP_NAMES];
        mo.axis = bo.axis = raw_attr(r);
        mo.block_size = bo.block_size = raw_attr(r);
        mo.rounding_mode = bo.rounding_mode = raw_attr(r);
        bo.bit_width = raw_attr(r);
        bo.sub_block_size = raw_attr(r);
        bo.sub_block_shift_bits = raw_attr(r);
        bo.convert_to_bfloat_before_bfp = (int32_t)u32(r);
        mo.num_threads = bo.num_threads = (int32_t)(u8(r) % 70) - 2;
        null_opt = u8(r) < 40;
        in_place = op != OP_QMX && u8(r) < 40;
    }
    const void *opt = null_opt ? NULL : op == OP_BFP ? (const void *)&bo : (const void *)&mo;
    run_op(op, x, s, &z, y, opt, 0, in_place);
}

/* -------------------------------------------------------------------- entry point */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    unsigned head = u8(&r);
    rng_state = u32(&r);
    if (head >= 250) {
        config_calls(&r);
        qsimd_set_isa(NULL, NULL);   /* back to the defaults for the next input */
        qsimd_set_num_threads(1);
        return 0;
    }
    tens x, s, z, y;
    memset(&x, 0, sizeof x); memset(&s, 0, sizeof s);
    memset(&z, 0, sizeof z); memset(&y, 0, sizeof y);
    if (head >= 200) {   /* MX / BFP / quantize_mx */
        mx_input(&r, OP_MX + (int)(head - 200) % 3, ((head - 200) / 3) % 2 == 0, &x, &s, &y);
        release(&x); release(&s); release(&y);
        return 0;
    }
    int op = (int)(head % 3), structured = (head / 3) % 2 == 0;
    qsimd_quantize_options qo;
    qsimd_dequantize_options dq;
    qsimd_quantize_options_init(&qo);
    qsimd_dequantize_options_init(&dq);
    int null_opt = 0, null_outs = 0;

    if (structured) {
        int64_t axis = 1, block = 0;
        int32_t xt = op == 0 ? PICK(&r, Q_X) : op == 1 ? PICK(&r, D_X) : QSIMD_FLOAT;
        int32_t yt = op == 0 ? PICK(&r, Q_Y) : op == 1 ? PICK(&r, D_Y) : QSIMD_UINT8;
        consistent_x(&r, &x, xt);
        if (op == 1 && (xt == QSIMD_UINT4 || xt == QSIMD_INT4 || xt == QSIMD_UINT2 ||
                        xt == QSIMD_INT2))
            x.t.packed = (int32_t)(u8(&r) & 1);
        int gran = (int)(u8(&r) % 3);
        param_shape(&r, &x, &s, gran, &axis, &block);
        s.present = 1;
        s.t.dtype = op == 0 ? PICK(&r, Q_X) : PICK(&r, D_Y);
        z.present = op != 2 && (u8(&r) & 1);
        z.t.dtype = op == 0 ? yt : xt;
        z.t.ndim = s.t.ndim;
        z.shape = stage_shape();
        memcpy(z.shape, s.shape, 64 * sizeof(int64_t));
        z.t.packed = (int32_t)(u8(&r) & 1);
        y.present = 1;
        y.t.dtype = yt;
        y.t.ndim = x.t.ndim;
        y.shape = stage_shape();
        memcpy(y.shape, x.shape, 64 * sizeof(int64_t));
        y.t.packed = op == 0 ? (int32_t)(u8(&r) & 1) : 0;
        qo.axis = dq.axis = axis;
        qo.block_size = dq.block_size = block;
        qo.saturate = (int32_t)(u8(&r) & 1);
        static const int32_t precisions[] = {0, 0, 0, 1, 10, 16};
        qo.precision = PICK(&r, precisions);
        static const int32_t threads[] = {0, 0, 0, 1, 2, 3, 8, 64};
        qo.num_threads = dq.num_threads = PICK(&r, threads);
        /* maybe break one thing */
        unsigned m = u8(&r);
        tens *victim = m % 4 == 0 ? &x : m % 4 == 1 ? &s : m % 4 == 2 ? &z : &y;
        switch (m < 128 ? 99 : m % 11) {
        case 0: victim->t.dtype = ALL_TYPES[u8(&r) % N_ALL]; break;
        case 1: victim->t.ndim = (int32_t)(u8(&r) % 40) - 3; break;
        case 2: if (victim->t.ndim > 0) victim->shape[u8(&r) % (unsigned)victim->t.ndim] = raw_dim(&r); break;
        case 3: qo.axis = dq.axis = (int64_t)(int32_t)u32(&r) * (u8(&r) & 1 ? 1 : 1 << 20); break;
        case 4: qo.block_size = dq.block_size = raw_dim(&r); break;
        case 5: qo.precision = ALL_TYPES[u8(&r) % N_ALL]; break;
        case 6: qo.num_threads = dq.num_threads = (int32_t)u32(&r); break;
        case 7: victim->present = 0; break;
        case 8: victim->t.packed = (int32_t)u32(&r); break;
        case 9: null_opt = 1; break;
        case 10: null_outs = 1; break;
        default: break;
        }
        unsigned nulls = u8(&r);
        int null_shape = nulls >= 250, null_data = nulls >= 240 && nulls < 250;
        materialise(&x, null_shape && victim == &x, null_data && victim == &x);
        materialise(&s, null_shape && victim == &s, null_data && victim == &s);
        materialise(&z, null_shape && victim == &z, null_data && victim == &z);
        materialise(&y, null_shape && victim == &y, null_data && victim == &y);
    } else {
        raw_tensor(&r, &x);
        raw_tensor(&r, &s);
        raw_tensor(&r, &z);
        raw_tensor(&r, &y);
        qo.axis = dq.axis = (int64_t)(int32_t)u32(&r) - (u8(&r) & 1 ? 0 : INT64_MAX / 2);
        qo.block_size = dq.block_size = raw_dim(&r);
        qo.saturate = (int32_t)u32(&r);
        qo.precision = ALL_TYPES[u8(&r) % N_ALL];
        qo.num_threads = dq.num_threads = (int32_t)(u8(&r) % 70) - 2;
        null_opt = u8(&r) < 40;
        null_outs = u8(&r) < 20;
    }
    const void *opt = null_opt ? NULL : op == 0 ? (const void *)&qo : (const void *)&dq;
    run_op(op, &x, &s, &z, &y, opt, null_outs, 0);
    release(&x); release(&s); release(&z); release(&y);
    return 0;
}
