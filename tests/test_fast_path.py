"""The Cython fast path (_core.quantize_fast / dequantize_fast / dynamic_quantize_fast) takes
every call whose arguments are already in final form. Each call here is first probed to be
one the fast path takes; its public result must then equal the ONNX reference and the same
call forced through the general Python path (a strided x, or bytes for a PackedTensor, which
the fast path declines). A bad argument must raise exactly what the general path raises."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, numpy_helper

import qsimd
from qsimd import _core
from qtest_util import assert_same, ref_dequantize, ref_dynamic, ref_quantize

Q, D = qsimd.quantize_linear, qsimd.dequantize_linear
BF16 = np.dtype(ml_dtypes.bfloat16)
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
SHAPE = (3, 4, 6)

# output / quantized types: name -> (dtype, ONNX code, in onnx.reference's type set)
TYPES = {
    "uint8": (np.uint8, TensorProto.UINT8, True),
    "int8": (np.int8, TensorProto.INT8, True),
    "uint16": (np.uint16, TensorProto.UINT16, True),
    "int16": (np.int16, TensorProto.INT16, True),
    "uint4": (ml_dtypes.uint4, TensorProto.UINT4, True),
    "int4": (ml_dtypes.int4, TensorProto.INT4, True),
    "uint2": (ml_dtypes.uint2, TensorProto.UINT2, True),
    "int2": (ml_dtypes.int2, TensorProto.INT2, True),
    "float8e4m3fn": (ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN, True),
    "float8e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ, True),
    "float8e5m2": (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2, True),
    "float8e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ, True),
    "float4e2m1": (ml_dtypes.float4_e2m1fn, TensorProto.FLOAT4E2M1, True),
    "int32": (np.int32, TensorProto.INT32, False),     # Quark (DQ: ONNX too)
    "uint32": (np.uint32, TensorProto.UINT32, False),  # Quark
    "float16": (np.float16, TensorProto.FLOAT16, False),
    "bfloat16": (BF16, TensorProto.BFLOAT16, False),
}
SUB = {"uint4": 4, "int4": 4, "uint2": 2, "int2": 2, "float4e2m1": 4}
INTS = {"uint8", "int8", "uint16", "int16", "uint4", "int4", "uint2", "int2", "int32", "uint32"}
F8 = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"}


def strided(a):
    """Same values and dtype, not C-contiguous (for empty arrays, which are always
    contiguous: the other byte order), so the fast path declines it."""
    buf = np.zeros(a.shape + (2,), a.dtype)
    buf[..., 0] = a
    v = buf[..., 0]
    if v.flags.c_contiguous:
        assert a.size == 0 and a.dtype.itemsize > 1
        v = a.astype(a.dtype.newbyteorder())
    return v


def probe_q(x, scale, zp=None, *, axis=1, block_size=0, output_dtype=None, saturate=True,
            precision=None, packed=False, out=None, num_threads=None):
    """The fast path's own answer (None: it declines the call)."""
    return _core.quantize_fast(x, scale, zp, axis, block_size, output_dtype, saturate,
                               precision, packed, out, num_threads)


def probe_d(x, scale, zp=None, *, axis=1, block_size=0, output_dtype=None, out=None,
            num_threads=None):
    return _core.dequantize_fast(x, scale, zp, axis, block_size, output_dtype, out,
                                 num_threads)


def raw_bytes(a):
    """ONNX raw layout of a 4/2-bit array, by onnx itself."""
    return np.frombuffer(numpy_helper.from_array(np.ascontiguousarray(a)).raw_data, np.uint8)


# ------------------------------------------------------------------ layouts
def layouts(rng, sdt):
    """(name, scale, kwargs, param shape) for per-tensor (Python float, NumPy scalar, 0-d,
    one-element 1-D), per-axis and blocked (inner and outer axis) scales of dtype sdt."""
    def s(shape):
        v = rng.random(shape) * 0.4 + 0.05
        if sdt == E8M0:
            v = 2.0 ** rng.integers(-4, 1, shape)
        return np.asarray(v).astype(np.float32).astype(sdt) if sdt != np.int32 else \
            rng.integers(1, 4, shape).astype(np.int32)
    out = [
        ("tensor-scalar", s(()).reshape(()).item() if sdt == np.float32 else
         s(())[()], {}, ()),   # Python float for float32, else a NumPy scalar
        ("tensor-0d", s(()), {}, ()),
        ("tensor-1", s((1,)), {"axis": 0}, (1,)),
        ("axis", s((SHAPE[1],)), {"axis": 1}, (SHAPE[1],)),
        ("block-last", s((3, 4, 2)), {"axis": -1, "block_size": 4}, (3, 4, 2)),
        ("block-outer", s((2, 4, 6)), {"axis": 0, "block_size": 2}, (2, 4, 6)),
    ]
    return out


def zero_points(rng, name, pshape):
    """(kind, zero point) for output/quantized type `name` and the parameter shape."""
    dt = np.dtype(TYPES[name][0])
    if name in F8:
        vals = np.zeros(pshape, np.float32)
    elif name == "float4e2m1":
        vals = rng.choice([0.0, 0.5, -1.0, 2.0], pshape)
    elif name in ("float16", "bfloat16"):
        vals = rng.choice([0.0, 0.25, -3.0, 100.5], pshape)
    else:
        info = ml_dtypes.iinfo(dt)
        lo, hi = max(int(info.min), -100), min(int(info.max), 100)
        vals = rng.integers(lo, hi + 1, pshape)
    zp = np.asarray(vals).astype(dt)
    kinds = [("none", None), ("array", zp)]
    if pshape == ():
        kinds.append(("scalar", zp[()]))
        if name in INTS:
            kinds.append(("int", int(zp)))
    return kinds


def q_inputs(rng, xdt):
    if xdt == np.int32:
        return rng.integers(-300, 301, SHAPE).astype(np.int32)
    x = (rng.standard_normal(SHAPE) * 4).astype(np.float32)
    x.reshape(-1)[:4] = [0.5, -2.5, 2000, -2000]   # ties, saturation (finite in float16)
    return x.astype(xdt)


Q_X_SCALES = [(np.float32, np.float32), (np.float32, E8M0), (np.float16, np.float16),
              (np.float16, np.float32), (BF16, BF16), (np.int32, np.int32),
              (np.int32, np.float32)]
OUT_SPELLINGS = {0: lambda n: n, 1: lambda n: TYPES[n][1], 2: lambda n: np.dtype(TYPES[n][0]),
                 3: lambda n: TYPES[n][0]}


@pytest.mark.parametrize("name", list(TYPES))
def test_quantize_matrix(isa, name):
    rng = np.random.default_rng(sum(map(ord, name)))
    dt, code, in_ref = TYPES[name]
    dt = np.dtype(dt)
    cases = 0
    for (xdt, sdt), spell in itertools.product(Q_X_SCALES, range(4)):
        x = q_inputs(rng, np.dtype(xdt))
        for lname, scale, kw, pshape in layouts(rng, np.dtype(sdt)):
            for zkind, zp in zero_points(rng, name, pshape):
                kw2 = dict(kw)
                if zkind in ("none", "int") or spell % 2:
                    kw2["output_dtype"] = OUT_SPELLINGS[spell](name)
                what = f"{name} x={np.dtype(xdt)} s={np.dtype(sdt)} {lname} zp={zkind}"
                assert probe_q(x, scale, zp, **kw2) is not None, what
                sarr = np.asarray(scale, np.float32 if isinstance(scale, float) else None)
                zarr = None if zp is None else np.asarray(zp, dt)
                general = Q(strided(x), scale, zp, **kw2)
                if in_ref:
                    want = ref_quantize(x, sarr, zarr, axis=kw.get("axis", 1),
                                        block_size=kw.get("block_size", 0),
                                        output_dtype=code)
                    assert_same(general, want, what + " general vs reference", count=True)
                got = Q(x, scale, zp, **kw2)
                assert_same(got, general, what)
                out = np.empty(x.shape, dt)
                out.view(np.uint8)[...] = 0x55
                assert Q(x, scale, zp, out=out, **kw2) is out
                assert_same(out, general, what + " out=")
                if name in SUB:
                    packed = Q(x, scale, zp, packed=True, **kw2)
                    pout = np.full((x.size * SUB[name] + 7) // 8, 0xAA, np.uint8)
                    assert probe_q(x, scale, zp, packed=True, **kw2) is not None
                    assert Q(x, scale, zp, packed=True, out=pout, **kw2).data is pout
                    want_bytes = raw_bytes(general)
                    assert packed.dtype == general.dtype and packed.shape == x.shape
                    assert_same(packed.data, want_bytes, what + " packed")
                    assert_same(pout, want_bytes, what + " packed out=")
                    slow = Q(strided(x), scale, zp, packed=True, **kw2)
                    assert slow.dtype == general.dtype and slow.shape == x.shape
                    assert_same(slow.data, want_bytes, what + " packed general")
                cases += 1
    assert cases == 7 * 4 * 14 + (7 * 4 * 2 if name in INTS else 0)


DQ_SCALES = [np.float32, np.float16, BF16, E8M0]
DQ_OUTS = [None, "float32", np.float16, BF16, TensorProto.FLOAT]


def dq_inputs(rng, name):
    dt = np.dtype(TYPES[name][0])
    if name in ("float16", "bfloat16"):
        return (rng.standard_normal(SHAPE) * 8).astype(np.float32).astype(dt)
    if name in INTS:   # 32-bit codes within 2**24: the reference subtracts in float32
        info = ml_dtypes.iinfo(dt)
        lo, hi = max(int(info.min), -2**24), min(int(info.max), 2**24)
        return rng.integers(lo, hi, SHAPE, endpoint=True, dtype=np.int64).astype(dt)
    bits = 4 if name == "float4e2m1" else 8
    return rng.integers(0, 1 << bits, SHAPE, dtype=np.uint8).view(dt)   # every code, NaN too


@pytest.mark.parametrize("name", list(TYPES))
def test_dequantize_matrix(isa, name):
    rng = np.random.default_rng(1000 + sum(map(ord, name)))
    dt, code, _ = TYPES[name]
    in_ref = name not in ("uint32", "float16", "bfloat16")   # Quark's types
    cases = 0
    for sdt, odt in itertools.product(DQ_SCALES, DQ_OUTS):
        x = dq_inputs(rng, name)
        for lname, scale, kw, pshape in layouts(rng, np.dtype(sdt)):
            for zkind, zp in zero_points(rng, name, pshape):
                kw2 = dict(kw, output_dtype=odt)
                what = f"{name} s={np.dtype(sdt)} out={odt} {lname} zp={zkind}"
                assert probe_d(x, scale, zp, **kw2) is not None, what
                general = D(strided(x), scale, zp, **kw2)
                if in_ref:
                    sarr = np.asarray(scale, np.float32 if isinstance(scale, float) else None)
                    ocode = None if odt is None else qsimd._dtypes.resolve(odt, "o")
                    want = ref_dequantize(x, sarr, None if zp is None else np.asarray(zp, dt),
                                          axis=kw.get("axis", 1),
                                          block_size=kw.get("block_size", 0),
                                          output_dtype=ocode)
                    assert_same(general, want, what + " general vs reference", count=True)
                assert_same(D(x, scale, zp, **kw2), general, what)
                out = np.empty(x.shape, general.dtype)
                out.view(np.uint8)[...] = 0x55
                assert D(x, scale, zp, out=out, **kw2) is out
                assert_same(out, general, what + " out=")
                if name in SUB:
                    data = raw_bytes(x).copy()
                    pt = qsimd.PackedTensor(data, name, x.shape)
                    assert probe_d(pt, scale, zp, **kw2) is not None, what + " packed"
                    assert_same(D(pt, scale, zp, **kw2), general, what + " PackedTensor")
                    slow = qsimd.PackedTensor(data.tobytes(), name, x.shape)
                    assert_same(D(slow, scale, zp, **kw2), general, what + " bytes")
                cases += 1
    assert cases == 4 * 5 * 14 + (4 * 5 * 2 if name in INTS else 0)


def test_dynamic(isa):
    rng = np.random.default_rng(5)
    for shape in [(1,), (7,), (3, 5), (2, 3, 4)]:
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        assert _core.dynamic_quantize_fast(x) is not None
        got = qsimd.dynamic_quantize_linear(x)
        general = qsimd.dynamic_quantize_linear(strided(x)) if x.size > 1 else got
        want = ref_dynamic(x)
        for g, s, w in zip(got, general, want):
            assert_same(g, w, f"dynamic {shape}")
            assert_same(s, w, f"dynamic general {shape}")
        assert got[1].shape == () and got[2].shape == ()


def test_bench_shaped_calls_take_the_fast_path():
    """The calls of benchmarks/small_calls.py, probed."""
    x = np.ones(1024, np.float32)
    s = np.float32(0.05)
    assert probe_q(x, s, np.uint8(128), out=np.empty(1024, np.uint8)) is not None
    assert probe_q(x, s, output_dtype="int16") is not None
    assert probe_q(x, s, output_dtype="int4", packed=True) is not None
    assert probe_q(x, s, output_dtype="float8e4m3fn") is not None
    assert probe_q(x.reshape(4, 64, 4), np.ones(64, np.float32), axis=1) is not None
    assert probe_q(x.reshape(32, 32), np.ones((32, 1), np.float32),
                   np.zeros((32, 1), ml_dtypes.int4), axis=-1, block_size=32) is not None
    assert probe_q(x.astype(np.float16), s, num_threads=2) is not None
    q8 = np.zeros(1024, np.uint8)
    assert probe_d(q8, s, np.uint8(3), out=np.empty(1024, np.float32)) is not None
    assert probe_d(q8, np.float16(0.5)) is not None
    assert probe_d(q8.view(ml_dtypes.int4), s) is not None
    assert probe_d(qsimd.PackedTensor(q8[:512], "int4", (1024,)), s) is not None
    assert probe_d(qsimd.PackedTensor(q8[:512], ml_dtypes.int4, (32, 32)), s) is not None


def test_declined_calls():
    """What is not in final form goes to the general path (which converts or refuses)."""
    x = np.ones((2, 4), np.float32)
    s = np.float32(0.5)
    assert probe_q(strided(x), s) is None
    assert probe_q(x.tolist(), s) is None
    assert probe_q(x.astype(">f4"), s) is None
    assert probe_q(x.astype(np.float64), s) is None
    assert probe_q(x, s, axis=np.int64(1)) is None
    assert probe_q(x, s, saturate=np.True_) is None
    assert probe_q(x, s, packed=np.False_) is None
    assert probe_q(x, s, num_threads=0) is None
    assert probe_q(x, s, output_dtype=True) is None
    assert probe_q(x, s, output_dtype=np.int8(3)) is None
    assert probe_q(x, 1, None) is None                       # Python int scale: converted
    assert probe_q(x, 1e300) is None                         # NumPy warns: overflow to inf
    assert probe_q(x, np.int64(1)) is None
    assert probe_q(x, s, 300) is None                        # out of range: ValueError
    assert probe_q(x, s, 1.0) is None                        # a float zp: converted/refused
    assert probe_q(x, s, out=np.empty((2, 4), np.uint8).view(np.matrix)) is None
    assert probe_q(x, s, out=np.empty((2, 4), ">u2"), output_dtype="uint16") is None
    assert probe_q(x, s, out=np.empty((2, 4), np.uint8)[:, ::-1]) is None
    assert probe_q(x, s, out=x.view(np.uint8)[:, :4]) is None   # overlaps x
    ro = np.empty((2, 4), np.uint8)
    ro.flags.writeable = False
    assert probe_q(x, s, out=ro) is None
    u = np.zeros((2, 4), np.uint8)
    assert probe_d(u, s, out=u.view(np.uint8)) is None       # wrong dtype for out
    assert probe_d(u, s, output_dtype="int8") is None
    assert probe_d(qsimd.PackedTensor(u.tobytes(), "int4", (16,)), s) is None
    assert probe_d(qsimd.PackedTensor(u.reshape(-1), "int4", [16]), s) is None
    assert probe_d(qsimd.PackedTensor(u.reshape(-1), "int4", (17,)), s) is None
    assert probe_d(qsimd.PackedTensor(u.reshape(-1), "int8", (8,)), s) is None
    assert probe_d(qsimd.PackedTensor(u.reshape(-1)[::-1], "int4", (16,)), s) is None
    assert probe_d(u, np.int32(2)) is None                    # converted to float32


def test_precision_takes_the_fast_path(isa):
    x = np.linspace(-40, 40, 64, dtype=np.float32).reshape(4, 16)
    s = np.float32(0.3)
    for prec, code in (("float32", 1), ("float16", 10), (BF16, 16)):
        got = probe_q(x, s, output_dtype="int8", precision=prec)
        assert got is not None, prec
        assert_same(got, ref_quantize(x, np.asarray(s), output_dtype=3, precision=code), prec)


def test_spec_cache_keeps_bools_and_ints_apart():
    u8 = np.zeros((2, 3), np.uint8)
    f = np.ones((2, 3), np.float32)
    assert D(u8, 1.0, output_dtype=1).dtype == np.float32      # caches the int 1
    assert Q(f, 1.0, output_dtype=3).dtype == np.int8
    for spec in (True, np.True_, 1.0):
        with pytest.raises(TypeError, match="output_dtype"):
            D(u8, 1.0, output_dtype=spec)
    with pytest.raises(TypeError, match="output_dtype"):
        Q(f, 1.0, output_dtype=True)
    for spec in ("int8", np.int8, np.dtype(np.int8), np.dtype("i1"), TensorProto.INT8):
        assert Q(f, 1.0, output_dtype=spec).dtype == np.int8
    assert Q(f, 1.0, output_dtype=np.dtype(">i2")).dtype == np.dtype("=i2")
    assert Q(f, 1.0, output_dtype=0).dtype == np.uint8        # ONNX 0: unset
    assert D(u8, np.float16(1), output_dtype=0).dtype == np.float16


# ------------------------------------------------------------------ errors
F = np.ones((2, 3), np.float32)
F4 = np.ones((2, 4), np.float32)
U8 = np.zeros((2, 3), np.uint8)
S3 = np.ones(3, np.float32)
RO = np.zeros((2, 3), np.uint8)
RO.flags.writeable = False


def _rank33(dtype, lead=1):
    """[an array of rank 33] (beyond the C API), or [] where NumPy cannot make one (< 2.0)."""
    try:
        return [np.ones((lead,) + (1,) * 32, dtype)]
    except ValueError:
        return []


try:   # a scale of rank 33 (NumPy before 2.0: another bad scale, 2 entries for an axis of 3)
    RANK33 = np.ones((1,) * 33, np.float32)
except ValueError:
    RANK33 = np.ones(2, np.float32)

Q_BAD = [
    (F, S3, {"axis": 2}), (F, S3, {"axis": -3}), (F, S3, {"axis": -2**63}),
    (F, S3, {"axis": 2**63}), (F, S3, {"block_size": -2**63 - 1}),
    (F, np.ones(2, np.float32), {}), (F, np.ones((2, 3), np.float32), {}),
    (F, np.ones(7, np.float32), {"axis": 0}), (F, RANK33, {}),
    (F4, np.ones((2, 2), np.float32), {"block_size": 1}),
    (F4, np.ones((2, 2), np.float32), {"block_size": 4}),
    (F4, np.ones((3, 2), np.float32), {"block_size": 2}),
    (F, 1.0, {"block_size": -1}),
    (F, S3, {"zero_point": np.zeros(2, np.uint8)}),
    (F, S3, {"zero_point": 3}), (F, S3, {"zero_point": np.uint8(3)}),
    (F, 1.0, {"zero_point": np.zeros(3, np.uint8)}),
    (F, 1.0, {"zero_point": np.uint8(0), "output_dtype": "int8"}),
    (F, 1.0, {"zero_point": np.zeros((), ml_dtypes.int4), "output_dtype": ml_dtypes.uint4}),
    (F, 1.0, {"zero_point": np.float32(1)}), (F, 1.0, {"zero_point": np.ones((), np.float32)}),
    (F, 1.0, {"zero_point": np.zeros((), ml_dtypes.float8_e8m0fnu)}),
    (F, 1.0, {"zero_point": 300}), (F, 1.0, {"zero_point": -1}),
    (F, 1.0, {"zero_point": 8, "output_dtype": "int4"}),
    (F, 1.0, {"zero_point": 2**70}), (F, 1.0, {"zero_point": True}),
    (F, 1.0, {"output_dtype": True}), (F, 1.0, {"output_dtype": np.True_}),
    (F, 1.0, {"output_dtype": "foo"}), (F, 1.0, {"output_dtype": 999}),
    (F, 1.0, {"output_dtype": -1}), (F, 1.0, {"output_dtype": 2**80}),
    (F, 1.0, {"output_dtype": np.float64}), (F, 1.0, {"output_dtype": "float32"}),
    (F, 1.0, {"output_dtype": 1}), (F, 1.0, {"output_dtype": 24}),
    (F, 1.0, {"output_dtype": object}), (F, 1.0, {"output_dtype": 1.5}),
    (F, 1.0, {"packed": True}), (F, 1.0, {"packed": True, "output_dtype": "float8e4m3fn"}),
    (F, 1.0, {"packed": 2, "output_dtype": "int4"}), (F, 1.0, {"packed": None}),
    (F, 1.0, {"saturate": 2}), (F, 1.0, {"saturate": None}), (F, 1.0, {"saturate": -1}),
    (F, 1.0, {"precision": "int8"}), (F, 1.0, {"precision": True}),
    (F, 1.0, {"num_threads": 0}), (F, 1.0, {"num_threads": 65}),
    (F, 1.0, {"num_threads": True}), (F, 1.0, {"num_threads": 1.0}),
    (F, np.ones(1), {}), (F, np.ones(1, bool), {}), (F, np.ones(1, np.uint8), {}),
    (F, np.array([1, None], object), {}), (F, "1", {}), (F, None, {}),
    (F, 1.0, {"out": np.empty((3, 2), np.uint8)}), (F, 1.0, {"out": np.empty(6, np.uint8)}),
    (F, 1.0, {"out": np.empty((2, 3), np.int8)}), (F, 1.0, {"out": RO}),
    (F, 1.0, {"out": [0] * 6}),
    (F, 1.0, {"out": np.empty(2, np.uint8), "output_dtype": "int4", "packed": True}),
    (F, 1.0, {"out": np.empty((2, 3), np.uint8), "output_dtype": "int4"}),
    (F.astype(np.float64), 1.0, {}), (F.astype(np.uint8), 1.0, {}),
] + [(a, 1.0, {}) for a in _rank33(np.float32, 2)]


def _outcome(fn, x, scale, kw):
    try:
        fn(x, scale, **kw)
    except Exception as e:   # noqa: BLE001 - the type is what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", range(len(Q_BAD)))
def test_quantize_errors_match_the_general_path(case):
    x, scale, kw = Q_BAD[case]
    fast = _outcome(Q, x, scale, kw)
    general = _outcome(Q, strided(x), scale, kw)
    assert fast is not None, kw
    assert fast == general


E4 = np.zeros(4, ml_dtypes.float8_e4m3fn)
D_BAD = [
    (U8, S3, {"axis": 2}), (U8, S3, {"axis": -2**63}), (U8, S3, {"axis": 2**64}),
    (U8, np.ones(2, np.float32), {}), (U8, np.ones((1, 3), np.float32), {}),
    (np.zeros((2, 4), np.uint8), np.ones((2, 2), np.float32), {"block_size": 4}),
    (U8, S3, {"zero_point": np.zeros(4, np.uint8)}), (U8, 1.0, {"zero_point": np.int8(0)}),
    (U8, 1.0, {"zero_point": np.zeros((), np.int8)}), (U8, 1.0, {"zero_point": 300}),
    (U8, 1.0, {"zero_point": 1.5}), (U8, S3, {"zero_point": 1}),
    (E4, 1.0, {"zero_point": np.array(1.0, np.float32).astype(ml_dtypes.float8_e4m3fn)}),
    (E4, 1.0, {"zero_point": np.float32([0, 0, 0, 2]).astype(ml_dtypes.float8_e4m3fn)}),
    (E4, np.ones(4, np.float32), {"axis": 0, "zero_point":
                                  np.float32([0, 0, 0, 2]).astype(ml_dtypes.float8_e4m3fn)}),
    (E4, 1.0, {"zero_point": ml_dtypes.float8_e4m3fn(1.0)}), (E4, 1.0, {"zero_point": 1}),
    (U8, 1.0, {"output_dtype": "int8"}), (U8, 1.0, {"output_dtype": True}),
    (U8, 1.0, {"output_dtype": 999}), (U8, 1.0, {"output_dtype": np.uint8}),
    (U8, 1.0, {"output_dtype": 1.0}),
    (U8, np.ones(1, np.int32), {}), (U8, np.ones(1), {}),
    (U8, 1.0, {"num_threads": -1}), (U8, 1.0, {"block_size": -1}),
    (U8, 1.0, {"out": np.empty((2, 3), np.float16)}), (U8, 1.0, {"out": RO}),
    (U8.astype(np.uint64), 1.0, {}),
] + [(a, 1.0, {}) for a in _rank33(np.uint8, 2)]


@pytest.mark.parametrize("case", range(len(D_BAD)))
def test_dequantize_errors_match_the_general_path(case):
    x, scale, kw = D_BAD[case]
    fast = _outcome(D, x, scale, kw)
    general = _outcome(D, strided(x), scale, kw)
    assert fast is not None, kw
    assert fast == general


P6 = np.zeros(3, np.uint8)   # 6 int4 codes
PT_BAD = [
    (("int4", (2, 3)), np.ones(2, np.float32), {}),          # per-axis length
    (("int4", (2, 3)), S3, {"axis": 5}),
    (("int4", (2, 3)), np.ones((2, 2), np.float32), {"block_size": 1}),
    (("int4", (2, 3)), 1.0, {"zero_point": np.zeros((), ml_dtypes.uint4)}),
    (("int4", (2, 3)), 1.0, {"zero_point": 8}),
    (("int4", (2, 3)), S3, {"zero_point": np.zeros(2, ml_dtypes.int4)}),
    (("int4", (7,)), 1.0, {}), (("int4", (4,)), 1.0, {}),      # byte count
    (("int8", (3,)), 1.0, {}), (("float8e4m3fn", (3,)), 1.0, {}), ((True, (6,)), 1.0, {}),
    ((0, (6,)), 1.0, {}), ((None, (6,)), 1.0, {}),
    (("int4", (-6,)), 1.0, {}), (("int4", (6.0,)), 1.0, {}), (("int4", 6), 1.0, {}),
    (("int4", (2, 3)), 1.0, {"output_dtype": "int4"}),
    (("int4", (2, 3)), 1.0, {"out": np.empty(6, np.float32)}),
]


@pytest.mark.parametrize("case", range(len(PT_BAD)))
def test_packed_tensor_errors_match_the_general_path(case):
    (spec, shape), scale, kw = PT_BAD[case]
    fast = _outcome(D, qsimd.PackedTensor(P6.copy(), spec, shape), scale, kw)
    general = _outcome(D, qsimd.PackedTensor(P6.tobytes(), spec, shape), scale, kw)
    assert fast is not None, (spec, shape, kw)
    assert fast == general


@pytest.mark.parametrize("x", [np.zeros((0, 3), np.float32), np.zeros((2, 0), np.float32)]
                         + _rank33(np.float32, 2), ids=str)
def test_dynamic_errors_match_the_general_path(x):
    fast = _outcome(lambda a, _s: qsimd.dynamic_quantize_linear(a), x, None, {})
    general = _outcome(lambda a, _s: qsimd.dynamic_quantize_linear(a), strided(x), None, {})
    assert fast is not None
    assert fast == general


def test_out_overlap_and_aliasing_equal_the_separate_call(isa):
    """Overlapping out= is declined and computed through a temporary: same values."""
    x = np.linspace(-3, 3, 24, dtype=np.float32)
    want = Q(x.copy(), np.float32(0.05), np.int8(3))
    buf = x.copy()
    assert probe_q(buf, np.float32(0.05), np.int8(3), out=buf.view(np.int8)[:24]) is None
    got = Q(buf, np.float32(0.05), np.int8(3), out=buf.view(np.int8)[:24])
    assert got.tobytes() == want.tobytes()
    z = np.zeros(2, np.uint8)
    codes = np.arange(8, dtype=np.uint8).reshape(2, 4)
    want = D(codes, np.float32([0.5, 2]), z, axis=0)
    buf = np.zeros(12, np.float32)
    buf[:2] = [0.5, 2]
    sc, out = buf[:2], buf[1:9].reshape(2, 4)   # out overlapping the scale
    assert probe_d(codes, sc, z, axis=0, out=out) is None
    got = D(codes, sc, z, axis=0, out=out)
    assert got is out and got.tobytes() == want.tobytes()
