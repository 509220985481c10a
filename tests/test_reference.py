"""Differential tests: qsimd against onnx.reference.ReferenceEvaluator, bit for bit.

The reference is only used where it is defined: x / scale finite and |q| < 2^31 (it casts the
rounded quotient to int32, which is platform behaviour beyond that), finite nonzero scales,
and int32 DequantizeLinear inputs whose difference is exact in float32. Those regions are
covered with hand-computed expectations in test_contract.py.
"""
import itertools
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, numpy_helper

import qsimd
from qtest_util import (
    QUICK, FLOAT_TYPES, OUT_TYPES, Q_IN_TYPES, SUBBYTE, assert_same, budget, ref_broadcast,
    ref_dequantize, ref_dynamic, ref_quantize,
)

# |q| bound: the reference casts rint(q) to int32 and adds the zero point there (wraps).
Q_LIMIT = 2.0**31 - 2.0**17
PRECISIONS = {None: None, "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
              "bfloat16": TensorProto.BFLOAT16}
DQ_X_TYPES = dict({k: v[0] for k, v in OUT_TYPES.items()}, int32=np.dtype(np.int32))
INT32_DQ_LIMIT = 2**24   # the reference subtracts int32 zero points after a float32 cast


# ------------------------------------------------------------------ value generators
def _scales(rng, n, dtype, precision):
    """Finite nonzero scales of `dtype`, also after the `precision` cast: ordinary, powers of
    two (exact ties), negative, subnormal and the values that make reciprocals inexact."""
    if dtype == np.int32:
        pick = rng.integers(0, 4, n)
        v = np.where(pick == 0, rng.integers(1, 5, n),
                     np.where(pick == 1, 2 ** rng.integers(0, 31, n).astype(np.float64),
                              rng.integers(1, 2**31 - 1, n))).astype(np.float64)
        v = np.minimum(v, 2**31 - 1) * np.where(rng.random(n) < 0.2, -1, 1)
        s = v.astype(np.int32)
    else:
        tiny = -20.0 if dtype == np.float16 else -140.0
        pick = rng.integers(0, 5, n)
        v = np.select(
            [pick == 0, pick == 1, pick == 2, pick == 3],
            [2.0 ** rng.uniform(-20, 8, n), 2.0 ** rng.integers(-12, 6, n).astype(float),
             rng.choice([0.1, 1 / 3, 0.0031372549, 0.017, 1.7, 0.05, 0.30005], n),
             2.0 ** rng.uniform(tiny, tiny + 4, n)],
            2.0 ** rng.uniform(-4, 4, n))
        v *= np.where(rng.random(n) < 0.15, -1.0, 1.0)
        s = v.astype(dtype)
    with np.errstate(all="ignore"):
        chk = s.astype(np.float64) if precision is None else s.astype(precision).astype(np.float64)
        bad = ~np.isfinite(chk) | (chk == 0)
    s[bad] = np.array(1, dtype)
    return s


def _zero_points(rng, n, qmin, qmax):
    pick = rng.integers(0, 4, n)
    edge = rng.choice([qmin, qmax, qmin + 1, qmax - 1, 0, min(1, qmax)], n)
    mid = (qmin + qmax) // 2
    return np.select([pick == 0, pick == 1], [edge, np.clip(mid + rng.integers(-3, 4, n), qmin, qmax)],
                     rng.integers(qmin, qmax + 1, n)).astype(np.int64)


def _targets(rng, n, zp, qmin, qmax):
    """Quotients q = x / scale aimed at the interesting places."""
    lo, hi = qmin - zp, qmax - zp
    pick = rng.integers(0, 8, n)
    delta = rng.choice([-1.5, -1, -0.5, -1e-3, 0, 1e-3, 0.5, 1, 1.5], n)
    span = np.minimum(hi - lo, 400) + 6
    return np.select(
        [pick == 0, pick == 1, pick == 2, pick == 3, pick == 4, pick == 5],
        [np.floor(rng.uniform(lo - 3, lo - 3 + span, n)) + 0.5,    # ties inside and beyond
         np.where(rng.random(n) < 0.5, lo, hi) + delta,           # just around the range ends
         rng.uniform(lo - 3, lo - 3 + span, n),
         rng.choice([-1, 1], n) * 10.0 ** rng.uniform(0, 9.4, n),  # saturation, |q| < 2^31
         rng.choice([0.0, -0.0], n),
         rng.integers(-20, 20, n) + 0.5],                          # generic ties
        rng.normal(0, 30, n))


def _raw_finite(rng, n, dtype):
    """Random bit patterns of a float type (finite ones), or random int32."""
    if dtype == np.int32:
        return rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    bits = rng.integers(0, 2**(8 * dtype.itemsize), n, dtype=np.uint64)
    v = bits.astype(np.uint32 if dtype.itemsize == 4 else np.uint16).view(dtype)
    with np.errstate(all="ignore"):
        v[~np.isfinite(v.astype(np.float64))] = 0
    return v


def _to_type(v, dtype):
    if dtype == np.int32:
        return np.clip(np.rint(v), -2**31, 2**31 - 1).astype(np.int32)
    with np.errstate(all="ignore"):
        out = v.astype(dtype)
    out[~np.isfinite(out.astype(np.float64))] = 0
    return out


def _layout(rng, rank, shape, gran):
    """axis, block_size, scale shape for a granularity."""
    if gran == "tensor":
        axis = int(rng.integers(-rank, rank)) if rank else 1
        return axis, 0, [(), (1,), (1,) * rank][int(rng.integers(0, 3))]
    axis = int(rng.integers(-rank, rank))
    d = shape[axis]
    if gran == "axis":
        return axis, 0, (d,)
    b = int(rng.integers(1, d + 3)) if d else int(rng.integers(1, 4))
    sshape = list(shape)
    sshape[axis] = -(-d // b)
    return axis, b, tuple(sshape)


def _shape(rng, rank, cap):
    shape, prod = [], 1
    for _ in range(rank):
        hi = max(1, min(24, cap // prod))
        d = int(rng.choice([1, 2, 3, int(rng.integers(1, hi + 1))]))
        shape.append(min(d, hi))
        prod *= shape[-1]
    if rank and rng.random() < 0.08:
        shape[int(rng.integers(0, rank))] = 0
    return tuple(shape)


def make_quantize_case(seed, xt, stn, otn, gran, with_zp, precision, rank=None, cap=1500):
    rng = np.random.default_rng(seed)
    xdt, sdt = Q_IN_TYPES[xt][0], Q_IN_TYPES[stn][0]
    odt, ocode, qmin, qmax = OUT_TYPES[otn]
    pdt = FLOAT_TYPES[precision][0] if precision else None
    if rank is None:
        rank = int(rng.integers(0 if gran == "tensor" else 1, 6))
    shape = _shape(rng, rank, cap)
    axis, block, sshape = _layout(rng, rank, shape, gran)
    scale = _scales(rng, int(np.prod(sshape, dtype=np.int64)), sdt, pdt).reshape(sshape)
    zp_vals = _zero_points(rng, scale.size, qmin, qmax).reshape(sshape)
    zp = zp_vals.astype(odt) if with_zp else None
    zfull = ref_broadcast(zp_vals if with_zp else np.zeros(sshape, np.int64), shape, axis, block)
    sfull = ref_broadcast(scale, shape, axis, block)
    n = int(np.prod(shape, dtype=np.int64))
    zb = np.broadcast_to(zfull, shape).reshape(-1)
    sb64 = np.broadcast_to(sfull, shape).reshape(-1).astype(np.float64)
    x = _to_type(_targets(rng, n, zb, qmin, qmax) * sb64, xdt)
    raw = rng.random(n) < 0.1          # plus raw bit patterns: subnormals, huge, anything
    x[raw] = _raw_finite(rng, int(raw.sum()), xdt)
    x = x.reshape(shape)
    # Keep the reference defined: its own quotient must be finite with |q| < 2^31.
    with np.errstate(all="ignore"):
        q = (x.astype(pdt) / sfull.astype(pdt)) if pdt is not None else x / sfull
        q = np.broadcast_to(np.asarray(q, np.float64), shape)
        bad = ~np.isfinite(q) | (np.abs(q) >= Q_LIMIT)
    x[bad] = 0
    return x, scale, zp, axis, block, ocode


def run_quantize_case(x, scale, zp, axis, block, ocode, precision, spell, what):
    want = ref_quantize(x, scale, zp, axis=axis, block_size=block,
                        output_dtype=ocode if (zp is None or spell) else None,
                        precision=PRECISIONS[precision])
    kw = {}
    if spell or zp is None:
        kw["output_dtype"] = spell or ocode
    got = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block,
                                precision=precision, **kw)
    assert_same(got, want, what, count=True)
    if want.dtype.itemsize == 1 and want.dtype.name in SUBBYTE:
        # the packed kernels: ONNX raw bytes of the reference's result
        packed = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block,
                                       precision=precision, packed=True, **kw)
        assert packed.tobytes() == numpy_helper.from_array(want).raw_data, f"packed {what}"


# ------------------------------------------------------------------ QuantizeLinear
@st.composite
def quantize_params(draw):
    return dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        xt=draw(st.sampled_from(list(Q_IN_TYPES))),
        stn=draw(st.sampled_from(list(Q_IN_TYPES))),
        otn=draw(st.sampled_from(list(OUT_TYPES))),
        gran=draw(st.sampled_from(["tensor", "axis", "block"])),
        with_zp=draw(st.booleans()),
        precision=draw(st.sampled_from([None, None, None, "float32", "float16", "bfloat16"])),
        spell=draw(st.sampled_from([None, "name", "dtype", "code"])),
    )


def _spelling(otn, how):
    return {None: None, "name": otn, "dtype": OUT_TYPES[otn][0], "code": OUT_TYPES[otn][1]}[how]


@settings(max_examples=budget(1500))
@given(p=quantize_params())
def test_quantize_random(isa, p):
    x, scale, zp, axis, block, ocode = make_quantize_case(
        p["seed"], p["xt"], p["stn"], p["otn"], p["gran"], p["with_zp"], p["precision"])
    run_quantize_case(x, scale, zp, axis, block, ocode, p["precision"],
                      _spelling(p["otn"], p["spell"]), str(p))


@pytest.mark.parametrize("inner", [255, 256, 257, 300, 513, 1000])
@pytest.mark.parametrize("otn", ["uint8", "int8", "int4"])
def test_quantize_negative_scale_long_blocks(isa, inner, otn):
    """A negative scale entry longer than the kernels' expansion (256 elements) is done in
    pieces; the entries after it must still get their own parameters (found by hypothesis:
    seed 467149, per-axis on axis 0 with 330 elements per entry)."""
    rng = np.random.default_rng(inner)
    dt, code = OUT_TYPES[otn][0], OUT_TYPES[otn][1]
    x = (rng.standard_normal((4, inner)) * 50).astype(np.float32)
    s = np.array([0.5, -2.0, 1.5, -0.25], np.float32)
    zp = np.array([1, -1, 2, 0]).astype(dt) if otn != "uint8" else np.array([1, 3, 2, 0], dt)
    assert_same(qsimd.quantize_linear(x, s, zp, axis=0),
                ref_quantize(x, s, zp, axis=0, output_dtype=code), f"{otn} inner={inner}")


@pytest.mark.parametrize("xt,stn", list(itertools.product(Q_IN_TYPES, Q_IN_TYPES)))
def test_quantize_every_type(isa, xt, stn):
    """Every x type x scale type x output type, per-tensor / per-axis / blocked, zp or not."""
    for i, (otn, gran) in enumerate(itertools.product(OUT_TYPES, ["tensor", "axis", "block"])):
        for with_zp in (False, True):
            seed = zlib.crc32(repr((xt, stn, otn, gran, with_zp)).encode())
            case = make_quantize_case(seed, xt, stn, otn, gran, with_zp, None,
                                      rank=2 if gran != "tensor" else 1, cap=700)
            x, scale, zp, axis, block, ocode = case
            run_quantize_case(x, scale, zp, axis, block, ocode, None, None,
                              f"{xt}/{stn}->{otn} {gran} zp={with_zp} seed={seed}")


@pytest.mark.parametrize("precision", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("xt", list(Q_IN_TYPES))
def test_quantize_precision_every_type(isa, xt, precision):
    for stn, otn in itertools.product(Q_IN_TYPES, ["uint8", "int8", "int16", "int4"]):
        seed = zlib.crc32(repr((xt, stn, otn, precision)).encode())
        x, scale, zp, axis, block, ocode = make_quantize_case(
            seed, xt, stn, otn, "axis", True, precision, rank=2, cap=600)
        run_quantize_case(x, scale, zp, axis, block, ocode, precision, None,
                          f"{xt}/{stn}->{otn} precision={precision}")


def _q_both(x, scale, zp=None, **kw):
    """qsimd and the reference on the same call (attribute codes for the reference)."""
    ref_kw = dict(kw)
    if "precision" in kw:
        ref_kw["precision"] = PRECISIONS[kw["precision"]]
    return qsimd.quantize_linear(x, scale, zp, **kw), ref_quantize(x, scale, zp, **ref_kw)


# The quotient precision table (docs/CONTRACT.md rule 1); expectations worked by hand.
# f16(0.30005) = 1229 * 2^-12 = 0.300048828125, and 2048 / that = 6825.55...:
#   rounded to f16 first (spacing 4 in [4096, 8192)) -> 6824; rounded from f32 -> 6826.
F16_S = np.float16(0.30005)


@pytest.mark.parametrize("xv,sv,precision,expected", [
    (np.float16(2048), F16_S, None, 6824),                # f16 / f16: quotient in f16
    (np.float32(2048), F16_S, None, 6826),                # f32 / f16: quotient in f32
    (np.float16(2048), np.float32(F16_S), None, 6826),    # f16 / f32: f32
    (np.float16(2048), F16_S, "float32", 6826),           # precision overrides the pair
    (np.float32(2048), np.float32(F16_S), "float16", 6824),
    # int32 x: f64 quotient. 16777217 / 2^25 = 0.5 + 2^-25 -> 1; through f32 it is 0.5 -> 0
    (np.int32(16777217), np.float32(2.0**25), None, 1),
    (np.int32(16777217), np.float32(2.0**25), "float32", 0),
    # x = 0.5 + 2^-12: f16 has spacing 2^-11 there, the tie goes to even 0.5 -> 0
    (np.float32(0.5 + 2.0**-12), np.float32(1), None, 1),
    (np.float32(0.5 + 2.0**-12), np.float32(1), "float16", 0),
    # x = 2.5 + 2^-8: bf16 spacing in [2, 4) is 2^-6, so it becomes 2.5 -> 2 (ties to even)
    (np.float32(2.5 + 2.0**-8), np.float32(1), None, 3),
    (np.float32(2.5 + 2.0**-8), np.float32(1), "bfloat16", 2),
    # bf16 / bf16: 257 / 1 = 257 is not a bf16 (spacing 2 in [256, 512)) ... use the quotient
    # 3 / bf16(1/86) where bf16(1/86) = 0.01165771484375 = 191 * 2^-14: 3 / that = 257.34 ->
    # bf16 258 -> 258; in f32 it rounds to 257
    (ml_dtypes.bfloat16(3), ml_dtypes.bfloat16(191 * 2.0**-14), None, 258),
    (ml_dtypes.bfloat16(3), np.float32(191 * 2.0**-14), None, 257),
])
def test_quotient_precision(isa, xv, sv, precision, expected):
    x = np.array([xv] * 3)
    s = np.array(sv)
    zp = np.zeros((), np.int16)   # int16 output: the quotients exceed 255
    kw = {} if precision is None else {"precision": precision}
    got, want = _q_both(x, s, zp, **kw)
    assert got.tolist() == [expected] * 3
    assert_same(got, want, "reference", count=True)


@pytest.mark.parametrize("spelling", [
    np.int8, np.dtype(np.int8), "int8", "INT8", TensorProto.INT8, "TensorProto.INT8",
])
def test_output_dtype_spellings_int8(isa, spelling):
    x = np.array([-300, -128.5, -1.5, -0.5, 0.5, 1.5, 126.5, 127.5, 300], np.float32)
    got = qsimd.quantize_linear(x, np.float32(1), output_dtype=spelling)
    assert_same(got, ref_quantize(x, np.array(np.float32(1)), output_dtype=TensorProto.INT8),
                str(spelling), count=True)


@pytest.mark.parametrize("otn", list(OUT_TYPES))
@pytest.mark.parametrize("how", ["dtype", "mldtype_type", "name", "upper", "code"])
def test_output_dtype_spellings(isa, otn, how):
    dt, code, qmin, qmax = OUT_TYPES[otn]
    spec = {"dtype": dt, "mldtype_type": dt.type, "name": otn, "upper": otn.upper(),
            "code": code}[how]
    x = np.arange(qmin - 2, qmax + 3, dtype=np.float32)[:600] * np.float32(0.5)
    got = qsimd.quantize_linear(x, np.float32(0.5), output_dtype=spec)
    assert got.dtype == dt
    assert_same(got, ref_quantize(x, np.array(np.float32(0.5)), output_dtype=code), otn,
                count=True)


# ------------------------------------------------------------------ DequantizeLinear
def make_dequantize_case(seed, xtn, stn, gran, with_zp, rank=None, cap=1500):
    rng = np.random.default_rng(seed)
    xdt, sdt = DQ_X_TYPES[xtn], FLOAT_TYPES[stn][0]
    if xtn == "int32":
        qmin, qmax = -INT32_DQ_LIMIT, INT32_DQ_LIMIT
    else:
        qmin, qmax = OUT_TYPES[xtn][2], OUT_TYPES[xtn][3]
    if rank is None:
        rank = int(rng.integers(0 if gran == "tensor" else 1, 6))
    shape = _shape(rng, rank, cap)
    axis, block, sshape = _layout(rng, rank, shape, gran)
    ns = int(np.prod(sshape, dtype=np.int64))
    pick = rng.integers(0, 4, ns)
    sv = np.select([pick == 0, pick == 1, pick == 2],
                   [2.0 ** rng.uniform(-30, 10, ns), rng.choice([0.0, -0.0, 1e-45, 3e38], ns),
                    -(2.0 ** rng.uniform(-10, 10, ns))], 2.0 ** rng.uniform(-3, 3, ns))
    scale = _to_type(sv, sdt).reshape(sshape)
    n = int(np.prod(shape, dtype=np.int64))
    if xtn == "int32":
        # the reference's f32(x) - zp is exact only while |x|, |zp|, |x - zp| <= 2^24
        zp_vals = rng.integers(-2**23, 2**23 + 1, ns).reshape(sshape)
        x = rng.integers(-2**23, 2**23 + 1, n)
        edges = rng.random(n) < 0.2
        x[edges] = rng.choice([-2**23, 2**23, 0, 1, -1], int(edges.sum()))
    else:
        zp_vals = _zero_points(rng, ns, qmin, qmax).reshape(sshape)
        x = rng.integers(qmin, qmax + 1, n)
        edges = rng.random(n) < 0.3
        x[edges] = rng.choice([qmin, qmax, qmin + 1, qmax - 1, 0], int(edges.sum()))
    x = x.astype(xdt).reshape(shape)
    zp = zp_vals.astype(xdt) if with_zp else None
    return x, scale, zp, axis, block


@st.composite
def dequantize_params(draw):
    xtn = draw(st.sampled_from(list(DQ_X_TYPES)))
    with_zp = draw(st.booleans())
    outs = [None, "float32", "float16", "bfloat16"]
    if xtn == "int32" and with_zp:
        # the reference rounds the f64 product of an int32 difference straight to f16/bf16;
        # the contract rounds the f32 product (test_contract.py covers that case)
        outs = ["float32"]
    stn = draw(st.sampled_from(list(FLOAT_TYPES)))
    out = draw(st.sampled_from(outs))
    return dict(seed=draw(st.integers(0, 2**32 - 1)), xtn=xtn, stn=stn, out=out,
                gran=draw(st.sampled_from(["tensor", "axis", "block"])), with_zp=with_zp)


def run_dequantize_case(x, scale, zp, axis, block, out, what):
    code = FLOAT_TYPES[out][1] if out else None
    want = ref_dequantize(x, scale, zp, axis=axis, block_size=block, output_dtype=code)
    got = qsimd.dequantize_linear(x, scale, zp, axis=axis, block_size=block,
                                  output_dtype=out)
    assert_same(got, want, what, count=True)


@settings(max_examples=budget(800))
@given(p=dequantize_params())
def test_dequantize_random(isa, p):
    x, scale, zp, axis, block = make_dequantize_case(p["seed"], p["xtn"], p["stn"], p["gran"],
                                                     p["with_zp"])
    run_dequantize_case(x, scale, zp, axis, block, p["out"], str(p))


@pytest.mark.parametrize("out", [None, "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("stn", list(FLOAT_TYPES))
@pytest.mark.parametrize("xtn", [k for k in DQ_X_TYPES if k != "int32"])
def test_dequantize_every_code(isa, xtn, stn, out):
    """Every code of the type against every zero point edge, per-axis, and blocked."""
    dt, _, qmin, qmax = OUT_TYPES[xtn]
    codes = np.arange(qmin, qmax + 1)
    if QUICK and codes.size > 4096:   # 16-bit types under emulation: a spread of codes
        codes = np.unique(np.concatenate([codes[::61], codes[:64], codes[-64:]]))
    zps = np.array(sorted({qmin, qmax, 0, qmin + 1, qmax - 1, (qmin + qmax) // 2}))
    rng = np.random.default_rng(len(codes) + len(stn))
    x = np.broadcast_to(codes, (len(zps), len(codes))).astype(dt)
    scale = _to_type(np.concatenate([[1.0, 0.1], 2.0 ** rng.uniform(-20, 20, len(zps) - 2)])
                     * rng.choice([-1, 1], len(zps)), FLOAT_TYPES[stn][0])
    run_dequantize_case(x, scale, zps.astype(dt), 0, 0, out, f"{xtn} per-axis")
    run_dequantize_case(x, scale[:1], None, 0, 0, out, f"{xtn} per-tensor, no zp")
    # blocked along the codes with a short last block
    b = 7 if len(codes) > 7 else 3
    sb = np.repeat(scale[:, None], -(-len(codes) // b), axis=1)
    zb = np.repeat(zps[:, None], sb.shape[1], axis=1).astype(dt)
    run_dequantize_case(x, sb, zb, 1, b, out, f"{xtn} blocked")


@pytest.mark.parametrize("out", ["float32", "float16", "bfloat16"])
def test_dequantize_int32_no_zero_point(isa, out):
    """Without a zero point the reference rounds x to f32 exactly as qsimd: any int32."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.integers(-2**31, 2**31, 4000), [-2**31, 2**31 - 1, 2**24 + 1,
                                                             -(2**24) - 1, 0]]).astype(np.int32)
    run_dequantize_case(x, np.array(np.float32(0.37)), None, 1, 0, out, "int32")


# ------------------------------------------------------------------ DynamicQuantizeLinear
@st.composite
def dynamic_inputs(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["mixed", "positive", "negative", "zeros", "single", "wide",
                                 "ties", "bits"]))
    rank = draw(st.integers(0, 4))
    rng = np.random.default_rng(seed)
    shape = _shape(rng, rank, 2000)
    if kind == "single":
        shape = (1,) * rank
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:   # DynamicQuantizeLinear needs one element at least (errors are elsewhere)
        shape, n = (1,), 1
    mag = 10.0 ** rng.uniform(-30, 30)
    v = rng.normal(0, 1, n) * mag
    if kind == "positive":
        v = np.abs(v)
    elif kind == "negative":
        v = -np.abs(v)
    elif kind == "zeros":
        v = np.where(rng.random(n) < 0.5, 0.0, -0.0)
    elif kind == "wide":
        v = rng.choice([-1, 1], n) * 10.0 ** rng.uniform(-45, 38.5, n)
    elif kind == "ties":   # range 255 and ties: x = k + 0.5 with an integer zero point
        v = rng.integers(-100, 155, n) + 0.5
        v[:2] = [-100.0, 155.0][: min(2, n)]
    elif kind == "bits":
        v = _raw_finite(rng, n, np.dtype(np.float32)).astype(np.float64)
    return np.asarray(v, np.float32).reshape(shape)


@settings(max_examples=budget(400))
@given(x=dynamic_inputs())
def test_dynamic_random(isa, x):
    want = ref_dynamic(x)
    # scale 0 (a subnormal-only range underflows): the reference then divides 0/0
    if want[1] == 0:
        return
    got = qsimd.dynamic_quantize_linear(x)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"output {i}", count=(i == 0))


# ------------------------------------------------------------------ lengths and tails
# SIMD kernels work in vectors of 4..64 elements: every length up to 70 and a few around
# powers of two exercise the head / body / tail split, and blocked runs that start mid-vector.
LENGTHS = (list(range(0, 71)) + [127, 128, 129, 255, 256, 257, 1023, 4099] if not QUICK
           else list(range(0, 35)) + [63, 64, 65, 129, 1023])


def _defined(x, sfull):
    """x with 0 wherever the reference's quotient x / scale is not finite or too large."""
    with np.errstate(all="ignore"):
        q = np.asarray(x / sfull, np.float64)
    x = x.copy()
    x[~np.isfinite(q) | (np.abs(q) >= Q_LIMIT)] = 0
    return x


@pytest.mark.parametrize("xt", list(Q_IN_TYPES))
def test_quantize_lengths(isa, xt):
    rng = np.random.default_rng(21)
    for n in LENGTHS:
        otn = list(OUT_TYPES)[n % len(OUT_TYPES)]
        dt, code, qmin, qmax = OUT_TYPES[otn]
        stn = list(Q_IN_TYPES)[n % 4]
        scale = _scales(rng, 1, Q_IN_TYPES[stn][0], None).reshape(())
        zp = np.array(rng.integers(qmin, qmax + 1)).astype(dt)
        q = _targets(rng, n, int(zp.astype(np.int64)), qmin, qmax)
        x = _defined(_to_type(q * float(scale), Q_IN_TYPES[xt][0]), scale)
        run_quantize_case(x, scale, zp, 1, 0, code, None, None, f"n={n} {otn}")
        # blocked along the only axis, with block sizes that split vectors unevenly
        for b in (1, 3, 8, 17, 33):
            if n == 0 or b >= n:
                continue
            s = -(-n // b)
            bs = _scales(rng, s, Q_IN_TYPES[stn][0], None)
            bz = rng.integers(qmin, qmax + 1, s).astype(dt)
            xb = _defined(x, np.repeat(bs, b)[:n])
            run_quantize_case(xb, bs, bz, 0, b, code, None, None, f"n={n} b={b} {otn}")


@pytest.mark.parametrize("xt", list(Q_IN_TYPES))
def test_quantize_long_entries_mixed_signs(isa, xt):
    """Entries that cover more than 256 elements (the chunk in which the FMA kernels handle a
    negative scale), with scales of both signs one after another: per-axis with large inner
    sizes and blocks longer than a chunk. The libFuzzer harness found AVX2/AVX-512 applying a
    negative entry's scale past its end here."""
    rng = np.random.default_rng(77)
    cases = [((3, 300), 0, 0), ((2, 3, 520), 1, 0), ((4, 257), 0, 0),
             ((2, 900), -1, 300), ((3, 1100), 1, 513)]
    for i, (shape, axis, block) in enumerate(cases):
        otn = list(OUT_TYPES)[i % len(OUT_TYPES)]
        dt, code, qmin, qmax = OUT_TYPES[otn]
        stn = list(Q_IN_TYPES)[i % 4]
        ne = -(-shape[axis] // block) if block else shape[axis]
        mag = _scales(rng, ne, Q_IN_TYPES[stn][0], None)
        scale = (np.abs(mag.astype(np.float64)) * np.where(np.arange(ne) % 2, 1, -1))
        scale = scale.astype(Q_IN_TYPES[stn][0])
        if block:
            sshape = list(shape)
            sshape[axis] = ne
            scale = np.broadcast_to(np.expand_dims(scale, [d for d in range(len(shape))
                                                            if d != axis % len(shape)]),
                                    sshape).copy()
        zp = np.zeros(scale.shape, dt)
        # the scale in its own type, so that _defined sees a float16 quotient overflow
        full = ref_broadcast(scale, shape, axis, block)
        q = _targets(rng, int(np.prod(shape)), 0, qmin, qmax).reshape(shape)
        x = _defined(_to_type(q * full.astype(np.float64), Q_IN_TYPES[xt][0]), full)
        run_quantize_case(x, scale, zp, axis, block, code, None, None,
                          f"{shape} axis={axis} block={block} {otn}")


@pytest.mark.parametrize("xtn", list(DQ_X_TYPES))
def test_dequantize_lengths(isa, xtn):
    rng = np.random.default_rng(22)
    dt = DQ_X_TYPES[xtn]
    # int32: the reference's f32(x) - zp is exact only within +-2^24 (and f32 output only)
    qmin, qmax = (-2**23, 2**23) if xtn == "int32" else OUT_TYPES[xtn][2:]
    for n in LENGTHS:
        out = "float32" if xtn == "int32" else [None, "float32", "float16", "bfloat16"][n % 4]
        stn = list(FLOAT_TYPES)[n % 3]
        x = rng.integers(qmin, qmax + 1, n).astype(dt)
        scale = _to_type(np.array(2.0 ** rng.uniform(-8, 8)), FLOAT_TYPES[stn][0])
        zp = np.array(rng.integers(qmin, qmax + 1)).astype(dt)
        run_dequantize_case(x, scale, zp, 0, 0, out, f"n={n}")
        for b in (1, 3, 8, 17, 33):
            if n == 0 or b >= n:
                continue
            s = -(-n // b)
            bs = _to_type(2.0 ** rng.uniform(-8, 8, s), FLOAT_TYPES[stn][0])
            bz = rng.integers(qmin, qmax + 1, s).astype(dt)
            run_dequantize_case(x, bs, bz, 0, b, out, f"n={n} b={b}")


def test_dynamic_lengths(isa):
    rng = np.random.default_rng(23)
    for n in LENGTHS[1:]:
        for shift in (0.0, 5.0, -5.0):
            x = (rng.normal(shift, 3, n)).astype(np.float32)
            # the extremes at every position class (first, last, middle)
            if n > 2:
                x[int(rng.integers(0, n))] = 40.0
            got, want = qsimd.dynamic_quantize_linear(x), ref_dynamic(x)
            for i, (g, w) in enumerate(zip(got, want)):
                assert_same(g, w, f"n={n} output {i}", count=(i == 0))


def test_onnx_attribute_defaults(isa):
    """ONNX attribute values 0 mean "unset" (output_dtype=0, precision=0); saturate has no
    effect on integer outputs. All as the reference."""
    x = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 300.0], np.float32)
    s = np.array(np.float32(1))
    assert_same(qsimd.quantize_linear(x, s, output_dtype=0), ref_quantize(x, s))
    assert_same(qsimd.quantize_linear(x, s, precision=0), ref_quantize(x, s))
    z = np.array(3, np.int8)
    for sat in (False, 0, True, 1):
        assert_same(qsimd.quantize_linear(x, s, z, saturate=sat), ref_quantize(x, s, z))
    xq = np.array([0, 1, 255], np.uint8)
    h = np.array(np.float16(0.5))
    assert_same(qsimd.dequantize_linear(xq, h, output_dtype=0), ref_dequantize(xq, h))
