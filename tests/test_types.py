"""float8 / float4 outputs and inputs, float8e8m0 scales, and AMD Quark's int32 / uint32 /
float16 / bfloat16 types.

Expectations come from onnx.reference, from ml_dtypes' own conversions (every float16 and
bfloat16 input, every float8 code), and, for the Quark types that ONNX lacks, from a NumPy
model of docs/CONTRACT.md written here (numpy division as the reference divides, then float64
clamping / float32 addition)."""
import itertools
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, numpy_helper

import qsimd
from qsimd import _core, quark
from qtest_util import (
    BF16, E8M0, FLOAT_TYPES, FP_TYPES, QUICK, Q_IN_TYPES, assert_same, budget, ref_broadcast,
    ref_dequantize, ref_quantize,
)

F8 = [k for k in FP_TYPES if k != "float4e2m1"]
SCALE_TYPES = dict(Q_IN_TYPES, e8m0=(E8M0, TensorProto.FLOAT8E8M0))
DQ_SCALE_TYPES = dict(FLOAT_TYPES, e8m0=(E8M0, TensorProto.FLOAT8E8M0))
PRECISIONS = {None: None, "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
              "bfloat16": TensorProto.BFLOAT16}
ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def _codes(dt):
    """Every code of a float8 / float4 type as that type (float4: the 16 nibbles)."""
    n = 16 if dt.name == "float4_e2m1fn" else 256
    return np.arange(n, dtype=np.uint8).view(dt)


def _ml_cast(v, dt, saturate):
    """ml_dtypes' conversion, with the reference's saturate=1 clip (float8 only)."""
    with np.errstate(all="ignore"):
        if saturate and dt.name != "float4_e2m1fn":
            fi = ml_dtypes.finfo(dt)
            v = np.clip(v, fi.min, fi.max)
        return v.astype(dt)


# ------------------------------------------------------------------ exhaustive vs ml_dtypes
@pytest.mark.parametrize("sat", [0, 1])
@pytest.mark.parametrize("name", list(FP_TYPES))
@pytest.mark.parametrize("src", ["float16", "bfloat16"])
def test_every_16bit_input(isa, name, sat, src):
    """All 2^16 float16 (bfloat16) x with scale 1 of the same type: the quotient is x itself,
    so y is ml_dtypes' conversion of x, packed float4 included."""
    dt = FP_TYPES[name][0]
    x = ALL16.view(np.float16 if src == "float16" else BF16)
    one = np.ones((), x.dtype)
    want = _ml_cast(x, dt, sat)
    got = qsimd.quantize_linear(x, one, output_dtype=name, saturate=bool(sat))
    with np.errstate(all="ignore"):   # numpy on ARM warns casting signalling NaNs
        x32 = x.astype(np.float32)
    assert_same(got, want, f"{src} -> {name} saturate={sat}")
    if name == "float4e2m1":
        packed = qsimd.quantize_linear(x, one, output_dtype=name, packed=True)
        assert packed.tobytes() == qsimd.pack(want).tobytes()
    # the same values as float32 x: the float32 path of the same conversion
    got32 = qsimd.quantize_linear(x32, np.float32(1), output_dtype=name, saturate=bool(sat))
    assert_same(got32, want, f"float32({src}) -> {name} saturate={sat}")


@pytest.mark.parametrize("out", [None, "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(FP_TYPES))
def test_every_code_dequantized(isa, name, out):
    """Every code times scales of every type (e8m0 included) against ml_dtypes' float32
    value, and against the reference."""
    dt = FP_TYPES[name][0]
    x = _codes(dt)
    # NaN scales with payloads: then a NaN x gives x's own NaN (qsimd's rule: which of two
    # NaNs numpy returns depends on its loop, 0-d scale or not), every other x the scale's
    qnan = np.array([0x7FC00123, 0xFFC00000], np.uint32).view(np.float32)
    isnan = np.isnan(x.astype(np.float32))
    for sdt, sv in [(np.float32, 0.37), (np.float16, -3.5), (BF16, 1e-30), (E8M0, 2.0**-20),
                    (np.float32, 0.0), (np.float32, np.inf), (np.float32, 1e-45),
                    (np.float32, qnan[0]), (np.float32, qnan[1])]:
        s = np.array(sv, sdt)
        odt = np.dtype(out) if out else s.dtype
        with np.errstate(all="ignore"):
            prod = x.astype(np.float32) * s.astype(np.float32)
            if np.isnan(s.astype(np.float32)):
                prod[isnan] = x.astype(np.float32)[isnan]
            want = prod.astype(odt)
        got = qsimd.dequantize_linear(x, s, output_dtype=out)
        assert_same(got, want, f"{name} * {s!r} -> {out}")
        code = FLOAT_TYPES[out][1] if out else None
        ref = ref_dequantize(x, s, output_dtype=code)
        if np.isnan(s.astype(np.float32)):
            got, ref = got[~isnan], ref[~isnan]
        assert_same(got, ref, "reference", count=True)
    if name == "float4e2m1":   # packed codes, every phase
        pt = qsimd.PackedTensor(qsimd.pack(x), name, x.shape)
        assert_same(qsimd.dequantize_linear(pt, np.float32(0.5)),
                    x.astype(np.float32) * np.float32(0.5), "packed float4")


def test_e8m0_output_every_bfloat16(isa):
    """DequantizeLinear with an e8m0 scale and no output_dtype gives e8m0: the float32
    product rounded as ml_dtypes rounds it. bfloat16 x (Quark input) times 2^0 reaches every
    float32 exponent, both signs, subnormals, inf and NaN."""
    x = ALL16.view(BF16)
    for code in (127, 0, 1, 200, 254, 255):
        s = np.array(code, np.uint8).view(E8M0)
        with np.errstate(all="ignore"):
            want = (x.astype(np.float32) * s.astype(np.float32)).astype(E8M0)
        assert_same(qsimd.dequantize_linear(x, s), want, f"scale code {code}")


def test_e8m0_scales_every_code(isa):
    """Every e8m0 scale (2^-127 .. 2^127 and NaN) in QuantizeLinear and DequantizeLinear."""
    s = np.arange(256, dtype=np.uint8).view(E8M0)
    x = np.array([1.0, -3.0, 2.0**-140, 6e37, 0.75, np.nan, 1.5], np.float32)
    xs = np.broadcast_to(x[:, None], (x.size, 256)).copy()
    for otn in ("int8", "uint16", "float8e4m3fn", "float8e5m2", "float4e2m1"):
        code = FP_TYPES[otn][1] if otn in FP_TYPES else getattr(TensorProto, otn.upper())
        got = qsimd.quantize_linear(xs, s, axis=1, output_dtype=otn)
        if otn in FP_TYPES:
            assert_same(got, ref_quantize(xs, s, axis=1, output_dtype=code), otn, count=True)
        else:   # the reference casts NaN / huge quotients to int32: compare the finite part
            with np.errstate(all="ignore"):
                q = xs / s.astype(np.float32)
            ok = np.isfinite(q) & (np.abs(q) < 2**31)
            want = ref_quantize(np.where(ok, xs, 0).astype(np.float32), s, axis=1,
                                output_dtype=code)
            assert_same(got[ok], want[ok], otn, count=True)
    xq = np.broadcast_to(np.arange(-3, 4, dtype=np.int8)[:, None], (7, 256)).copy()
    for out in (None, TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16):
        assert_same(qsimd.dequantize_linear(xq, s, axis=1, output_dtype=out),
                    ref_dequantize(xq, s, axis=1, output_dtype=out), f"DQ {out}", count=True)


# ------------------------------------------------------------------ boundary values
def _boundaries(dt):
    """Quotients at every interesting place of a float8 / float4 type: every finite value,
    every halfway point (exact ties), max + half an ulp (the overflow tie), beyond the max,
    subnormals and half the smallest one, the float32 neighbours of all of those, and the
    specials."""
    v = _codes(dt).astype(np.float64)
    fin = np.unique(v[np.isfinite(v)])
    mids = (fin[:-1] + fin[1:]) / 2
    top, below = fin[-1], fin[-2]
    tiny = np.min(fin[fin > 0])
    extra = [top + (top - below) / 2, top + (top - below), 2 * top, 1e30, tiny / 2, tiny / 4,
             tiny * 1.5, 3e38]
    base = np.concatenate([fin, mids, extra]).astype(np.float32)
    base = np.concatenate([base, -base])
    near = np.concatenate([np.nextafter(base, np.float32(np.inf)),
                           np.nextafter(base, np.float32(-np.inf))])
    spec = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45], np.float32)
    return np.concatenate([base, near, spec]).astype(np.float32)


@pytest.mark.parametrize("sat", [0, 1])
@pytest.mark.parametrize("name", list(FP_TYPES))
def test_boundaries_vs_reference(isa, name, sat):
    dt, code = FP_TYPES[name]
    q = _boundaries(dt)
    for s in (np.float32(1), np.float32(2.0**-7), np.float32(-4), np.float32(0.3),
              np.float32(1e-40)):
        with np.errstate(all="ignore"):
            x = (q * s).astype(np.float32)
        want = ref_quantize(x, np.array(s), output_dtype=code, saturate=sat)
        got = qsimd.quantize_linear(x, s, output_dtype=name, saturate=bool(sat))
        assert_same(got, want, f"{name} sat={sat} scale={s}", count=True)
        if name == "float4e2m1":
            p = qsimd.quantize_linear(x, s, output_dtype=name, packed=True)
            assert p.tobytes() == numpy_helper.from_array(want).raw_data


@pytest.mark.parametrize("name", list(FP_TYPES))
def test_boundaries_other_x_types(isa, name):
    """The same places reached from float16, bfloat16 and int32 x (float64 quotients: the
    reference rounds them to float32 before the float8 conversion, as ml_dtypes does)."""
    dt, code = FP_TYPES[name]
    q = _boundaries(dt)
    for xt, s in [("float16", np.float16(0.5)), ("bfloat16", BF16.type(2.0)),
                  ("float16", np.float32(0.3)), ("int32", np.float32(2.0**-20)),
                  ("int32", np.int32(3)), ("int32", np.array(2.0**-30, E8M0))]:
        xdt = Q_IN_TYPES[xt][0]
        with np.errstate(all="ignore"):
            v = q.astype(np.float64) * np.float64(np.asarray(s).astype(np.float64))
            if xt == "int32":
                v = np.clip(np.nan_to_num(v), -2**31, 2**31 - 1)
                v = np.concatenate([v, np.rint(v) + 0.5 * (np.arange(v.size) % 3 - 1)])
                x = np.clip(np.rint(v), -2**31, 2**31 - 1).astype(np.int32)
            else:
                x = v.astype(xdt)
        for sat in (0, 1):
            want = ref_quantize(x, np.array(s), output_dtype=code, saturate=sat)
            got = qsimd.quantize_linear(x, np.array(s), output_dtype=name, saturate=bool(sat))
            assert_same(got, want, f"{xt} / {np.asarray(s).dtype} -> {name} sat={sat}",
                        count=True)


def test_float64_quotient_rounds_through_float32(isa):
    """int32 x: the reference's float64 quotient reaches float8 through float32 (double
    rounding). 1 + 2^-4 + 2^-28 rounds to the float32 tie 1 + 2^-4, then to even: 1.0; a
    direct rounding would give 1.125."""
    x = np.array([2**28 + 2**24 + 1, -(2**28 + 2**24 + 1)], np.int32)
    got = qsimd.quantize_linear(x, np.float32(2.0**28), output_dtype="float8e4m3fn")
    assert got.astype(np.float32).tolist() == [1.0, -1.0]
    assert_same(got, ref_quantize(x, np.array(np.float32(2.0**28)),
                                  output_dtype=TensorProto.FLOAT8E4M3FN))


@pytest.mark.parametrize("name,expected", [
    # saturate=1: +-max; saturate=0: the rounded value decides (docs/CONTRACT.md)
    ("float8e4m3fn", {1: [0x7e, 0x7e, 0x7e, 0x7e, 0xfe, 0x7f, 0xff],
                      0: [0x7e, 0x7e, 0x7f, 0x7f, 0xff, 0x7f, 0xff]}),
    ("float8e5m2", {1: [0x7b, 0x7b, 0x7b, 0x7b, 0xfb, 0x7e, 0xfe],
                    0: [0x7b, 0x7c, 0x7c, 0x7c, 0xfc, 0x7e, 0xfe]}),
    ("float8e4m3fnuz", {1: [0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x80, 0x80],
                        0: [0x7f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]}),
    ("float8e5m2fnuz", {1: [0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x80, 0x80],
                        0: [0x7f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]}),
    ("float4e2m1", {1: [0x7, 0x7, 0x7, 0x7, 0xf, 0x8, 0x0],
                    0: [0x7, 0x7, 0x7, 0x7, 0xf, 0x8, 0x0]}),
])
def test_overflow_and_nan_by_hand(isa, name, expected):
    """[max, the overflow tie, just above it, +inf, -inf, NaN, -NaN] with the encodings
    written out by hand: e4m3fn 448 / tie 464, e5m2 57344 / 61440, e4m3fnuz 240 / 248,
    e5m2fnuz 57344 / 61440, float4 6 / 7. The tie rounds to even: down to 448 (mantissa
    110) for e4m3fn, past the max for the others (their max has an odd mantissa), so with
    saturate=0 it overflows. Float4 NaN gives -0 and -NaN +0 (ml_dtypes)."""
    top, tie = {"float8e4m3fn": (448, 464), "float8e5m2": (57344, 61440),
                "float8e4m3fnuz": (240, 248), "float8e5m2fnuz": (57344, 61440),
                "float4e2m1": (6, 7)}[name]
    x = np.array([top, tie, np.nextafter(np.float32(tie), np.float32(np.inf)), np.inf, -np.inf,
                  np.nan, -np.nan], np.float32)
    for sat in (1, 0):
        got = qsimd.quantize_linear(x, np.float32(1), output_dtype=name, saturate=bool(sat))
        assert got.view(np.uint8).tolist() == expected[sat], (name, sat)


def test_signed_zero_and_subnormals_by_hand(isa):
    x = np.array([-0.0, 0.0, -2.0**-10, 2.0**-9, 2.0**-10, 3 * 2.0**-11], np.float32)
    # e4m3fn: smallest subnormal 2^-9; 2^-10 is a tie to 0, 3 * 2^-11 rounds to 2^-9
    assert qsimd.quantize_linear(x, np.float32(1), output_dtype="float8e4m3fn").view(
        np.uint8).tolist() == [0x80, 0, 0x80, 1, 0, 1]
    # fnuz has no -0: -0 and a negative value that rounds to zero become +0 (its smallest
    # subnormal is 2^-10, so -2^-12 rounds to zero)
    xz = np.array([-0.0, 0.0, -2.0**-12, -2.0**-10], np.float32)
    assert qsimd.quantize_linear(xz, np.float32(1), output_dtype="float8e4m3fnuz").view(
        np.uint8).tolist() == [0, 0, 0, 0x81]
    # float4: without a zero point -0 stays -0 (0x8); with a +0 zero point -0 + 0 = +0
    f4 = np.zeros((), ml_dtypes.float4_e2m1fn)
    assert qsimd.quantize_linear(x[:2], np.float32(1), output_dtype="float4e2m1").view(
        np.uint8).tolist() == [0x8, 0]
    assert qsimd.quantize_linear(x[:2], np.float32(1), f4).view(np.uint8).tolist() == [0, 0]


def test_float4_zero_point_is_added_in_float(isa):
    """ONNX's reference adds a float4 zero point to the quotient in float before the cast:
    0.25 + 0.5 = 0.75 is a tie (-> even 1.0), 5 + 1 = 6, -7 + 0.5 saturates, 1 - 6 = -5 is
    a tie between -4 and -6 (-> even -4)."""
    x = np.array([0.25, 5.0, -7.0, 1.0], np.float32)
    zp = np.array([0.5, 1.0, 0.5, -6.0], np.float32).astype(ml_dtypes.float4_e2m1fn)
    got = qsimd.quantize_linear(x, np.ones(4, np.float32), zp, axis=0)
    assert got.astype(np.float32).tolist() == [1.0, 6.0, -6.0, -4.0]
    assert_same(got, ref_quantize(x, np.ones(4, np.float32), zp, axis=0))
    # int32 x: the quotient is float64 and so is the sum. q = -0.75 + 2^-26 + 2^-30 plus 1 is
    # 0.25 + 2^-26 + 2^-30, which float32 rounds up to 0.25 + 2^-25: above the tie -> 0.5.
    # Rounding q to float32 first would lose the excess (-0.75) and give the tie 0.25 -> 0.
    xi = np.array([-805306351, 805306351], np.int32)   # (-0.75 + 17 * 2^-30) * 2^30
    zi = np.array([1.0, -1.0], np.float32).astype(ml_dtypes.float4_e2m1fn)
    si = np.full(2, 2.0**30, np.float32)
    got = qsimd.quantize_linear(xi, si, zi, axis=0)
    assert got.astype(np.float32).tolist() == [0.5, -0.5]
    assert_same(got, ref_quantize(xi, si, zi, axis=0))


# ------------------------------------------------------------------ random differential
def _fp_targets(rng, dt, n):
    b = _boundaries(dt)
    pick = rng.integers(0, 3, n)
    top = float(ml_dtypes.finfo(dt).max)
    return np.select([pick == 0, pick == 1],
                     [rng.choice(b, n), rng.normal(0, top / 4, n)],
                     rng.choice([-1, 1], n) * 2.0 ** rng.uniform(-20, 20, n))


def _fp_scales(rng, n, sdt):
    if sdt == E8M0:
        return rng.integers(100, 150, n).astype(np.uint8).view(E8M0)
    if sdt == np.int32:
        return rng.choice([1, 2, 3, 7, -5, 1000], n).astype(np.int32)
    v = rng.choice([-1, 1], n) * 2.0 ** rng.uniform(-6, 6, n)
    v = np.where(rng.random(n) < 0.3, np.round(v * 4) / 4 + 0.25, v)
    return v.astype(sdt)


def make_fp_case(seed, name, xt, stn, gran, with_zp, precision):
    rng = np.random.default_rng(seed)
    dt, code = FP_TYPES[name]
    xdt, sdt = Q_IN_TYPES[xt][0], SCALE_TYPES[stn][0]
    rank = int(rng.integers(0 if gran == "tensor" else 1, 4))
    shape = tuple(int(rng.integers(1, 9)) for _ in range(rank))
    if gran == "tensor":
        axis, block, sshape = 1, 0, ()
    else:
        axis = int(rng.integers(-rank, rank))
        d = shape[axis]
        block = 0 if gran == "axis" else int(rng.integers(1, d + 2))
        sshape = (d,) if gran == "axis" else tuple(
            -(-d // block) if i == axis % rank else k for i, k in enumerate(shape))
    scale = _fp_scales(rng, int(np.prod(sshape, dtype=np.int64)), sdt).reshape(sshape)
    zp = None
    if with_zp:
        zv = np.zeros(scale.shape, np.float32)
        if name == "float4e2m1":   # the reference adds float4 zero points
            zv = rng.choice([0.0, -0.0, 0.5, 1.0, -1.5, 6.0, -6.0], scale.shape)
        zp = np.asarray(zv, np.float32).astype(dt)
    sfull = np.broadcast_to(ref_broadcast(scale, shape, axis, block), shape)
    n = int(np.prod(shape, dtype=np.int64))
    with np.errstate(all="ignore"):
        v = _fp_targets(rng, dt, n).reshape(shape) * sfull.astype(np.float64)
        if xdt == np.int32:
            x = np.clip(np.rint(np.nan_to_num(v)), -2**31, 2**31 - 1).astype(np.int32)
        else:
            x = v.astype(xdt)
    return x, scale, zp, axis, block, code


@st.composite
def fp_params(draw):
    return dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        name=draw(st.sampled_from(list(FP_TYPES))),
        xt=draw(st.sampled_from(list(Q_IN_TYPES))),
        stn=draw(st.sampled_from(list(SCALE_TYPES))),
        gran=draw(st.sampled_from(["tensor", "axis", "block"])),
        with_zp=draw(st.booleans()),
        precision=draw(st.sampled_from([None, None, "float32", "float16", "bfloat16"])),
        sat=draw(st.sampled_from([0, 1])),
        packed=draw(st.booleans()),
    )


def run_fp_case(x, scale, zp, axis, block, code, precision, sat, packed, what):
    want = ref_quantize(x, scale, zp, axis=axis, block_size=block,
                        output_dtype=code if zp is None else None,
                        precision=PRECISIONS[precision], saturate=sat)
    kw = {} if zp is not None else {"output_dtype": code}
    got = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block, precision=precision,
                                saturate=bool(sat), **kw)
    assert_same(got, want, what, count=True)
    if packed and code == TensorProto.FLOAT4E2M1:
        p = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block,
                                  precision=precision, packed=True, **kw)
        assert p.tobytes() == numpy_helper.from_array(want).raw_data, f"packed {what}"


@settings(max_examples=budget(400))
@given(p=fp_params())
def test_fp_quantize_random(isa, p):
    case = make_fp_case(p["seed"], p["name"], p["xt"], p["stn"], p["gran"], p["with_zp"],
                        p["precision"])
    run_fp_case(*case, p["precision"], p["sat"], p["packed"], str(p))


@pytest.mark.parametrize("stn", list(SCALE_TYPES))
@pytest.mark.parametrize("xt", list(Q_IN_TYPES))
def test_fp_quantize_every_type(isa, xt, stn):
    """Every x type x scale type x float output, per-axis and blocked, with the precision
    attribute (opset 23+) on the float16 / bfloat16 cases."""
    for name, gran, prec in itertools.product(FP_TYPES, ["axis", "block"],
                                              [None, "float16", "bfloat16"]):
        seed = zlib.crc32(repr((xt, stn, name, gran, prec)).encode())
        case = make_fp_case(seed, name, xt, stn, gran, True, prec)
        run_fp_case(*case, prec, seed % 2, True, f"{xt}/{stn}->{name} {gran} p={prec}")


@pytest.mark.parametrize("name", list(FP_TYPES))
def test_fp_dequantize_layouts(isa, name):
    """Per-axis and blocked float8 / float4 inputs (zero points zero, -0, or none) against
    the reference, every scale and output type."""
    dt, code = FP_TYPES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.choice(_codes(dt), (5, 37))
    for (stn, (sdt, _)), out in itertools.product(DQ_SCALE_TYPES.items(),
                                                  [None, "float32", "float16", "bfloat16"]):
        ocode = FLOAT_TYPES[out][1] if out else None
        s_axis = _fp_scales(rng, 5, sdt)
        zero = np.array([0.0, -0.0, 0.0, -0.0, 0.0], np.float32).astype(dt)
        for zp in (None, zero):
            got = qsimd.dequantize_linear(x, s_axis, zp, axis=0, output_dtype=out)
            assert_same(got, ref_dequantize(x, s_axis, zp, axis=0, output_dtype=ocode),
                        f"{name} {stn} {out} axis", count=True)
        sb = _fp_scales(rng, 5 * 5, sdt).reshape(5, 5)   # 37 = 4 * 8 + 5: a short block
        got = qsimd.dequantize_linear(x, sb, axis=1, block_size=8, output_dtype=out)
        assert_same(got, ref_dequantize(x, sb, axis=1, block_size=8, output_dtype=ocode),
                    f"{name} {stn} {out} blocked", count=True)


# SIMD kernels work in vectors of 4..64 elements: every length to 70 (head / body / tail)
LENGTHS = (list(range(0, 71)) + [127, 128, 129, 255, 256, 257, 1023] if not QUICK
           else list(range(0, 35)) + [63, 64, 65, 129])


@pytest.mark.parametrize("name", ["float8e4m3fn", "float8e5m2", "float4e2m1"])
def test_fp_lengths(isa, name):
    dt, code = FP_TYPES[name]
    rng = np.random.default_rng(31)
    for n in LENGTHS:
        s = np.float32(rng.choice([0.25, 0.3, -3.0]))
        with np.errstate(all="ignore"):
            x = (_fp_targets(rng, dt, n) * s).astype(np.float32)
        sat = n % 2
        want = ref_quantize(x, np.array(s), output_dtype=code, saturate=sat)
        got = qsimd.quantize_linear(x, s, output_dtype=name, saturate=bool(sat))
        assert_same(got, want, f"n={n}", count=True)
        back = qsimd.dequantize_linear(want, s)
        assert_same(back, ref_dequantize(want, np.array(s)), f"DQ n={n}")
        if name == "float4e2m1":
            raw = numpy_helper.from_array(want).raw_data
            p = qsimd.quantize_linear(x, s, output_dtype=name, packed=True)
            assert p.tobytes() == raw, f"packed n={n}"
            pt = qsimd.PackedTensor(np.frombuffer(raw, np.uint8), name, (n,))
            assert_same(qsimd.dequantize_linear(pt, s), back, f"packed DQ n={n}")
        for b in (3, 8, 17, 33):   # blocked runs starting mid-vector
            if b >= n:
                continue
            sb = rng.choice([0.25, 0.3, -3.0, 7.0], -(-n // b)).astype(np.float32)
            want = ref_quantize(x, sb, axis=0, block_size=b, output_dtype=code, saturate=sat)
            got = qsimd.quantize_linear(x, sb, axis=0, block_size=b, output_dtype=name,
                                        saturate=bool(sat))
            assert_same(got, want, f"n={n} b={b}", count=True)
            if name == "float4e2m1":
                p = qsimd.quantize_linear(x, sb, axis=0, block_size=b, output_dtype=name,
                                          packed=True)
                assert p.tobytes() == numpy_helper.from_array(want).raw_data


# ------------------------------------------------------------------ AMD Quark types
Q32 = {"int32": (np.dtype(np.int32), -2**31, 2**31 - 1),
       "uint32": (np.dtype(np.uint32), 0, 2**32 - 1)}


def _quotient(x, s, precision=None):
    """x / scale as the ONNX reference divides (numpy promotion, `precision` casts)."""
    with np.errstate(all="ignore"):
        if precision:
            p = FLOAT_TYPES[precision][0]
            return x.astype(p) / s.astype(p)
        return x / s


def model_quantize_q32(x, s, zp, otn, precision=None):
    """docs/CONTRACT.md rules 1-3 in NumPy: the reference's quotient, NaN -> qmin, clamp in
    float64, round half to even, add the zero point in int64."""
    dt, qmin, qmax = Q32[otn]
    q = np.asarray(_quotient(x, s, precision), np.float64)
    z = np.zeros(q.shape, np.int64) if zp is None else np.asarray(zp, np.int64)
    lo, hi = (qmin - z).astype(np.float64), (qmax - z).astype(np.float64)
    q = np.where(np.isnan(q), lo, np.clip(q, lo, hi))
    return (np.rint(q).astype(np.int64) + z).astype(dt)


def model_quantize_half(x, s, zp, otn, precision=None):
    """f16 / bf16 outputs: the quotient (float64 ones rounded to float32), plus the zero
    point in float32, rounded to nearest even."""
    dt = np.dtype(np.float16) if otn == "float16" else BF16
    with np.errstate(all="ignore"):
        q = np.asarray(_quotient(x, s, precision)).astype(np.float32)
        # an absent zero point is +0 (Quark adds it always): -0 becomes +0
        q = q + (np.float32(0) if zp is None else np.asarray(zp).astype(np.float32))
        return q.astype(dt)


def _q32_targets(rng, n, qmin, qmax, zp):
    lo, hi = qmin - zp, qmax - zp
    pick = rng.integers(0, 6, n)
    return np.select(
        [pick == 0, pick == 1, pick == 2, pick == 3, pick == 4],
        [rng.choice([lo, hi], n) + rng.choice([-1.5, -1, -0.5, 0, 0.5, 1, 1.5, 1e3], n),
         rng.choice([2.0**31, -2.0**31, 2.0**32, 2.0**31 - 0.5, 2.0**31 + 0.5, 1e30], n)
         * rng.choice([-1, 1], n),
         rng.integers(-1000, 1000, n) + 0.5,
         rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], n),
         rng.normal(0, 1e6, n)],
        rng.normal(0, 100, n))


@pytest.mark.parametrize("otn", list(Q32))
@pytest.mark.parametrize("xt", list(Q_IN_TYPES))
def test_quark_quantize_32bit(isa, xt, otn):
    dt, qmin, qmax = Q32[otn]
    rng = np.random.default_rng(zlib.crc32((xt + otn).encode()))
    zps = np.array([qmin, qmax, 0, 1, qmin + 7, (qmin + qmax) // 2], np.int64)
    for stn in SCALE_TYPES:
        sdt = SCALE_TYPES[stn][0]
        s = _fp_scales(rng, zps.size, sdt)
        if sdt != np.int32 and sdt != E8M0:
            s[0] = 1
        n = 64
        sf = np.asarray(s.astype(np.float64))
        q = np.stack([_q32_targets(rng, n, qmin, qmax, int(z)) for z in zps])
        with np.errstate(all="ignore"):
            v = q * sf[:, None]
            if xt == "int32":
                x = np.clip(np.nan_to_num(np.rint(v)), -2**31, 2**31 - 1).astype(np.int32)
            else:
                x = v.astype(Q_IN_TYPES[xt][0])
        zp = zps.astype(dt)
        for prec in (None, "float16"):
            got = qsimd.quantize_linear(x, s, zp, axis=0, precision=prec)
            want = model_quantize_q32(x, s[:, None], zp[:, None], otn, prec)
            assert_same(got, want, f"{xt}/{stn} -> {otn} p={prec}", count=True)
        got = quark.extended_quantize_linear(x, s, zp, axis=0)
        assert_same(got, model_quantize_q32(x, s[:, None], zp[:, None], otn), "quark name")


def test_quark_quantize_32bit_by_hand(isa):
    x = np.array([2.0**31, 2.0**31 - 128, -2.0**31, 2.5, -2.5, np.nan, np.inf, -np.inf, 2.0**32,
                  4294967040.0], np.float32)
    assert qsimd.quantize_linear(x, np.float32(1), output_dtype="int32").tolist() == [
        2**31 - 1, 2**31 - 128, -2**31, 2, -2, -2**31, 2**31 - 1, -2**31, 2**31 - 1, 2**31 - 1]
    assert qsimd.quantize_linear(x, np.float32(1), np.uint32(3)).tolist() == [
        2**31 + 3, 2**31 - 125, 0, 5, 3 - 2, 0, 2**32 - 1, 0, 2**32 - 1, 2**32 - 253]
    # int32 x divides in float64: 2^31 - 1 stays exact; zero point int32 min
    xi = np.array([2**31 - 1, -2**31, 1], np.int32)
    assert qsimd.quantize_linear(xi, np.int32(1), np.int32(-2**31)).tolist() == [
        -1, -2**31, -2**31 + 1]


@pytest.mark.parametrize("otn", ["float16", "bfloat16"])
@pytest.mark.parametrize("xt", list(Q_IN_TYPES))
def test_quark_quantize_half(isa, xt, otn):
    rng = np.random.default_rng(zlib.crc32((xt + otn + "h").encode()))
    odt = np.dtype(np.float16) if otn == "float16" else BF16
    for stn in SCALE_TYPES:
        s = _fp_scales(rng, 4, SCALE_TYPES[stn][0])
        n = 300
        with np.errstate(all="ignore"):
            v = np.concatenate([rng.normal(0, 1, (4, n // 3)) * 10.0 ** rng.uniform(-9, 6, (4, 1)),
                                rng.choice([65504, 65520, 65519.9, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25,
                                            3.4e38, 1e-41, np.nan, np.inf, -0.0], (4, n // 3)),
                                rng.integers(-3000, 3000, (4, n // 3)) + rng.choice([0.5, 0.25, 0], (4, n // 3))],
                               axis=1) * np.asarray(s.astype(np.float64))[:, None]
            x = (np.clip(np.nan_to_num(np.rint(v)), -2**31, 2**31 - 1).astype(np.int32)
                 if xt == "int32" else v.astype(Q_IN_TYPES[xt][0]))
        zp = np.array([0.0, 0.5, -3.0, 1000.25], np.float32).astype(odt)
        for z, prec in [(zp, None), (None, None), (zp, "bfloat16")]:
            got = qsimd.quantize_linear(x, s, z, axis=0, output_dtype=otn, precision=prec)
            want = model_quantize_half(x, s[:, None], None if z is None else z[:, None], otn,
                                       prec)
            assert_same(got, want, f"{xt}/{stn} -> {otn} zp={z is not None} p={prec}",
                        count=True)


def test_quark_quantize_half_by_hand(isa):
    # not rounded to an integer; the zero point is added in float32, +0 when absent
    x = np.array([1.0, 3.0, -0.0, 65504.0 * 3, 1e-9], np.float32)
    assert qsimd.quantize_linear(x, np.float32(3), output_dtype="float16").astype(
        np.float32).tolist() == [np.float32(np.float16(1 / 3)), 1.0, 0.0, 65504.0,
                                 np.float32(np.float16(1e-9 / 3))]
    # -0 / 3 + 0 is +0 whether the zero point is given or absent, float16 and bfloat16
    for otn in ("float16", "bfloat16"):
        got = qsimd.quantize_linear(x[2:3], np.float32(3), output_dtype=otn)
        assert got.view(np.uint16).tolist() == [0], otn
        zero = np.zeros((), np.float16 if otn == "float16" else BF16)
        assert qsimd.quantize_linear(x[2:3], np.float32(3), zero).view(np.uint16).tolist() \
            == [0], otn
    # a negative quotient that rounds to zero keeps its sign (-1e-30 + 0 is -1e-30)
    assert np.signbit(qsimd.quantize_linear(np.float32([-1e-30]), np.float32(1),
                                            output_dtype="float16")[0])
    # 2049 + 0.5 in float32 is 2049.5; float16 spacing there is 2: 2050
    assert qsimd.quantize_linear(np.float32([2049]), np.float32(1), np.float16(0.5)).tolist() \
        == [2050.0]
    # overflow is inf (no saturation), as a float16 cast
    assert np.isinf(qsimd.quantize_linear(np.float32([7e4]), np.float32(1),
                                          output_dtype="float16")[0])


@pytest.mark.parametrize("xtn", ["int32", "uint32", "float16", "bfloat16"])
def test_quark_dequantize(isa, xtn):
    rng = np.random.default_rng(zlib.crc32(xtn.encode()))
    if xtn in Q32:
        dt, lo, hi = Q32[xtn]
        xv = np.concatenate([rng.integers(lo, hi, 400, dtype=np.int64, endpoint=True),
                             [lo, hi, 0, 1, 2**24 + 1, hi - 1]])
        zv = np.array([lo, hi, 0, 2**24 + 1, 12345], np.int64)
    else:
        dt = np.dtype(np.float16) if xtn == "float16" else BF16
        with np.errstate(all="ignore"):
            xv = ALL16[rng.integers(0, 1 << 16, 406)].view(dt).astype(np.float64)
        zv = np.array([0.0, -0.0, 0.5, -1000.0, 3.0], np.float64)
    x = np.broadcast_to(xv, (zv.size, xv.size)).astype(dt)
    zp = zv.astype(dt)
    for sdt, out in [(np.float32, None), (np.float16, None), (BF16, "float32"),
                     (np.float32, "bfloat16"), (E8M0, None), (np.float32, "float16")]:
        s = _fp_scales(rng, zv.size, sdt)
        for z in (zp, None):
            got = qsimd.dequantize_linear(x, s, z, axis=0, output_dtype=out)
            with np.errstate(all="ignore"):
                if xtn in Q32:
                    d = x.astype(np.int64) - (0 if z is None else z.astype(np.int64)[:, None])
                    d = d.astype(np.float32)
                else:
                    d = x.astype(np.float32) - (np.float32(0) if z is None
                                                else z.astype(np.float32)[:, None])
                want = (d * s.astype(np.float32)[:, None]).astype(
                    np.dtype(out) if out else s.dtype)
            assert_same(got, want, f"{xtn} {np.dtype(sdt)} {out} zp={z is not None}",
                        count=True)
        if sdt == np.float32 and out is None:
            assert_same(quark.extended_dequantize_linear(x, s, zp, axis=0),
                        qsimd.dequantize_linear(x, s, zp, axis=0), "quark name")


def test_quark_names():
    assert quark.QUARK_TYPES == ("int8", "uint8", "int16", "uint16", "int32", "uint32",
                                 "float16", "bfloat16")
    x = np.array([0.2, 300.0, -1.0], np.float32)
    assert quark.extended_quantize_linear(x, np.float32(0.1)).tolist() == [2, 255, 0]   # uint8
    with pytest.raises(TypeError, match="Quark"):
        quark.extended_quantize_linear(x, 1.0, np.zeros((), ml_dtypes.float8_e4m3fn))
    with pytest.raises(TypeError, match="Quark"):
        quark.extended_quantize_linear(x, 1.0, output_dtype="int4")
    with pytest.raises(TypeError, match="Quark"):
        quark.extended_dequantize_linear(np.zeros(2, ml_dtypes.int4), 1.0)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("name", F8)
def test_float8_zero_point_must_be_zero(name):
    dt = FP_TYPES[name][0]
    x = _codes(dt)[:8]
    bad = [1.0, 0.5, -448.0 if "e4m3fn" == name[6:] else -2.0]
    for v in bad:
        with pytest.raises(ValueError, match="zero_point must be zero"):
            qsimd.dequantize_linear(x, np.float32(1), np.array(v, np.float32).astype(dt))
        with pytest.raises(ValueError, match="zero_point must be zero"):   # one bad entry
            qsimd.dequantize_linear(x.reshape(2, 4), np.ones(2, np.float32),
                                    np.array([0, v], np.float32).astype(dt), axis=0)
    nan = np.array(np.nan, np.float32).astype(dt)
    with pytest.raises(ValueError, match="zero_point must be zero"):
        qsimd.dequantize_linear(x, np.float32(1), nan)
    # +0 and -0 are zero (fnuz has no -0: it is +0 there)
    for z in (0.0, -0.0):
        zp = np.array(z, np.float32).astype(dt)
        assert_same(qsimd.dequantize_linear(x, np.float32(2), zp),
                    ref_dequantize(x, np.array(np.float32(2)), zp))
    # QuantizeLinear ignores a float8 zero point (reference and onnxruntime): its type counts
    xf = np.array([1.0, -3.0], np.float32)
    one = np.array(1.0, np.float32).astype(dt)
    assert_same(qsimd.quantize_linear(xf, np.float32(1), one),
                ref_quantize(xf, np.array(np.float32(1)), one))


def test_float4_dequantize_zero_point_ignored(isa):
    x = _codes(FP_TYPES["float4e2m1"][0])
    zp = np.array(3.0, np.float32).astype(ml_dtypes.float4_e2m1fn)
    assert_same(qsimd.dequantize_linear(x, np.float32(1), zp),
                ref_dequantize(x, np.array(np.float32(1)), zp))


@pytest.mark.parametrize("value", [2, -1, 0.5, "1", None])
def test_saturate_must_be_0_or_1(value):
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="saturate"):
        qsimd.quantize_linear(x, 1.0, output_dtype="float8e4m3fn", saturate=value)


@pytest.mark.parametrize("value", [2, -1, 255])
def test_saturate_checked_by_c_core(value):
    """The C API checks saturate too (the Python layer never passes such values)."""
    q = qsimd.Quantizer(np.float32(1), output_dtype="float8e4m3fn")
    scale = np.array(1, np.float32)   # the prepared operator's C calls, with saturate=value
    with pytest.raises(ValueError, match="saturate must be 0 or 1"):   # C checks it at setup
        q._setup(True, scale, 1, None, 0, 17, 1, 0, value, 0, False, 1, None)


def test_type_errors_new_types():
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match="^x "):        # float8 is not a QuantizeLinear input
        qsimd.quantize_linear(x.astype(ml_dtypes.float8_e5m2), 1.0)
    with pytest.raises(TypeError, match="^x "):        # e8m0 is a scale type only
        qsimd.dequantize_linear(x.astype(E8M0), 1.0)
    with pytest.raises(TypeError, match="output type"):
        qsimd.quantize_linear(x, 1.0, output_dtype="float8e8m0")
    with pytest.raises(TypeError, match="precision"):
        qsimd.quantize_linear(x, 1.0, output_dtype="float8e4m3fn", precision="float8e4m3fn")
    with pytest.raises(ValueError, match="packed"):
        qsimd.quantize_linear(x, 1.0, output_dtype="float8e4m3fn", packed=True)
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.quantize_linear(x, 1.0, np.zeros((), ml_dtypes.float8_e5m2),
                              output_dtype="float8e4m3fn")
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.dequantize_linear(x.astype(ml_dtypes.float8_e5m2), 1.0,
                                np.zeros((), ml_dtypes.float8_e4m3fn))


def test_python_zero_points_for_float_types(isa):
    x = np.array([1.0, -0.0, 2.5], np.float32)
    assert qsimd.quantize_linear(x, 1.0, 0.5, output_dtype="float4e2m1").astype(
        np.float32).tolist() == [1.5, 0.5, 3.0]
    assert qsimd.quantize_linear(x, 1.0, [0.25], output_dtype="float16").tolist() == [
        1.25, 0.25, 2.75]
    with pytest.raises(ValueError, match="exactly representable"):
        qsimd.quantize_linear(x, 1.0, 0.3, output_dtype="float4e2m1")
    with pytest.raises(ValueError, match="exactly representable"):
        qsimd.quantize_linear(x, 1.0, 0.1, output_dtype="bfloat16")
    with pytest.raises(TypeError, match="zero_point"):   # a float needs a float output type
        qsimd.quantize_linear(x, 1.0, 0.5)
    # float8 zero points given as Python numbers: 0 and -0 are fine for dequantize
    xq = np.array([1.0, 2.0], np.float32).astype(ml_dtypes.float8_e4m3fn)
    assert qsimd.dequantize_linear(xq, 2.0, 0).tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="zero_point must be zero"):
        qsimd.dequantize_linear(xq, 2.0, 1.0)
    # Python x for dequantize takes the zero point's float type
    assert qsimd.dequantize_linear([1.5, -6.0], 2.0,
                                   np.zeros((), ml_dtypes.float4_e2m1fn)).tolist() == [3, -12]


def test_float_outputs_with_threads(isa):
    """Work split across threads (each piece >= 256K elements): packed float4 cuts only at
    whole bytes; checked against the reference."""
    rng = np.random.default_rng(41)
    x = (rng.standard_normal((2, 3, 100001)) * 50).astype(np.float32)
    s = (rng.random(3) + 0.1).astype(np.float32)
    for name in ("float8e4m3fn", "float4e2m1"):
        dt, code = FP_TYPES[name]
        want = ref_quantize(x, s, axis=1, output_dtype=code)
        got = qsimd.quantize_linear(x, s, axis=1, output_dtype=name, num_threads=2)
        assert_same(got, want, name, count=True)
        if name == "float4e2m1":
            p = qsimd.quantize_linear(x, s, axis=1, output_dtype=name, packed=True,
                                      num_threads=3)
            assert p.tobytes() == numpy_helper.from_array(want).raw_data
        assert_same(qsimd.dequantize_linear(want, s, axis=1, num_threads=2),
                    ref_dequantize(want, s, axis=1), f"DQ {name}", count=True)
