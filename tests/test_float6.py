"""float6e2m3 / float6e3m2 (ONNX opset 28): QuantizeLinear outputs and DequantizeLinear
inputs, one code per byte and in ONNX's 6-bit packing (4 codes in 3 bytes).

Expectations come from onnx.reference at opset 28 (its QuantizeLinear adds a float6 zero
point in float before ml_dtypes' saturating cast; its DequantizeLinear subtracts it in
float32), from onnx.numpy_helper's packing, and from ml_dtypes' own conversions."""
import itertools
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import qsimd
from qtest_util import (
    BF16, E8M0, FLOAT_TYPES, QUICK, Q_IN_TYPES, _evaluator, _feeds, assert_same, budget,
    ref_broadcast,
)

F6 = {
    "float6e2m3": (np.dtype(ml_dtypes.float6_e2m3fn), TensorProto.FLOAT6E2M3),
    "float6e3m2": (np.dtype(ml_dtypes.float6_e3m2fn), TensorProto.FLOAT6E3M2),
}
SCALE_TYPES = dict(Q_IN_TYPES, e8m0=(E8M0, TensorProto.FLOAT8E8M0))
DQ_SCALE_TYPES = dict(FLOAT_TYPES, e8m0=(E8M0, TensorProto.FLOAT8E8M0))
PRECISIONS = {None: None, "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
              "bfloat16": TensorProto.BFLOAT16}
ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
OPSET = 28


def ref_q(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
          precision=None, saturate=None):
    """onnx.reference QuantizeLinear at opset 28."""
    if output_dtype is not None:
        out = helper.tensor_dtype_to_np_dtype(output_dtype)
    else:
        out = zero_point.dtype
    ins = [x.dtype, scale.dtype] + ([zero_point.dtype] if zero_point is not None else [])
    ev = _evaluator("QuantizeLinear", ins, [out],
                    {"axis": axis, "block_size": block_size, "output_dtype": output_dtype,
                     "precision": precision, "saturate": saturate}, opset=OPSET)
    with np.errstate(all="ignore"):
        return ev.run(None, _feeds(x, scale, zero_point))[0]


def ref_dq(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None):
    """onnx.reference DequantizeLinear at opset 28."""
    out = helper.tensor_dtype_to_np_dtype(output_dtype) if output_dtype else scale.dtype
    ins = [x.dtype, scale.dtype] + ([zero_point.dtype] if zero_point is not None else [])
    ev = _evaluator("DequantizeLinear", ins, [out],
                    {"axis": axis, "block_size": block_size, "output_dtype": output_dtype},
                    opset=OPSET)
    with np.errstate(all="ignore"):
        return ev.run(None, _feeds(x, scale, zero_point))[0]


def onnx_raw(a) -> bytes:
    """ONNX's packed bytes of a float6 array (numpy_helper.from_array)."""
    return numpy_helper.from_array(np.asarray(a)).raw_data


def codes(dt):
    return np.arange(64, dtype=np.uint8).view(dt)


def values(dt):
    v = codes(dt).astype(np.float64)
    return np.unique(v)


def boundaries(dt):
    """Quotients at every interesting place: every value, every halfway point (ties), max +
    half an ulp and beyond, subnormals and half the smallest one, their float32 neighbours,
    and the specials (inf, NaN of both signs, +-0, denormals, FLT_MAX)."""
    fin = values(dt)
    mids = (fin[:-1] + fin[1:]) / 2
    top, below = fin[-1], fin[-2]
    tiny = np.min(fin[fin > 0])
    extra = [top + (top - below) / 2, top + (top - below), 2 * top, 1e30, tiny / 2, tiny / 4,
             tiny * 1.5, 3e38]
    base = np.concatenate([fin, mids, extra]).astype(np.float32)
    base = np.concatenate([base, -base])
    near = np.concatenate([np.nextafter(base, np.float32(np.inf)),
                           np.nextafter(base, np.float32(-np.inf))])
    spec = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45,
                     3.4028235e38, -3.4028235e38], np.float32)
    return np.concatenate([base, near, spec]).astype(np.float32)


# ------------------------------------------------------------------ by hand
@pytest.mark.parametrize("name,x,want", [
    # e2m3: max 7.5 = 0 11 111 (0x1f); 7.6 and inf saturate; NaN -> -0 (0x20), -NaN -> +0
    ("float6e2m3", [7.5, 7.6, np.inf, -np.inf, 100.0, np.nan, -np.nan, -0.0, 0.125, 0.0625],
     [0x1f, 0x1f, 0x1f, 0x3f, 0x1f, 0x20, 0x00, 0x20, 0x01, 0x00]),
    # e3m2: max 28 = 0 111 11 (0x1f); smallest subnormal 2^-4 (0x01), 2^-5 is a tie to 0
    ("float6e3m2", [28.0, 100.0, np.inf, -np.inf, 30.0, np.nan, -np.nan, -0.0, 0.0625, 0.03125],
     [0x1f, 0x1f, 0x1f, 0x3f, 0x1f, 0x20, 0x00, 0x20, 0x01, 0x00]),
])
def test_saturation_and_nan_by_hand(isa, name, x, want):
    x = np.array(x, np.float32)
    got = qsimd.quantize_linear(x, np.float32(1), output_dtype=name)
    assert got.dtype == F6[name][0]
    assert got.view(np.uint8).tolist() == want
    assert_same(got, ref_q(x, np.array(np.float32(1)), output_dtype=F6[name][1]))


def test_zero_point_added_in_float_by_hand(isa):
    """e2m3: 0.0625 + 0.5 = 0.5625 is a tie between 0.5 and 0.625 (-> even 0.5); 7 + 0.5 =
    7.5; -7 - 1 saturates at -7.5; -0 + 0 = +0 (no zero point: -0 stays -0)."""
    dt = F6["float6e2m3"][0]
    x = np.array([0.0625, 7.0, -7.0, -0.0], np.float32)
    zp = np.array([0.5, 0.5, -1.0, 0.0], np.float32).astype(dt)
    got = qsimd.quantize_linear(x, np.ones(4, np.float32), zp, axis=0)
    assert got.astype(np.float32).tolist() == [0.5, 7.5, -7.5, 0.0]
    assert got.view(np.uint8)[3] == 0
    assert_same(got, ref_q(x, np.ones(4, np.float32), zp, axis=0))
    assert qsimd.quantize_linear(x[3:], np.float32(1), output_dtype="float6e2m3").view(
        np.uint8).tolist() == [0x20]


def test_dequantize_subtracts_zero_point_by_hand(isa):
    """Opset 28's reference subtracts a float6 zero point (unlike float4, whose zero point it
    ignores): (3 - 0.5) * 2 = 5."""
    for name, (dt, _) in F6.items():
        x = np.array([3.0, -1.0, 0.5], np.float32).astype(dt)
        zp = np.array(0.5, np.float32).astype(dt)
        got = qsimd.dequantize_linear(x, np.float32(2), zp)
        assert got.tolist() == [5.0, -3.0, 0.0]
        assert_same(got, ref_dq(x, np.array(np.float32(2)), zp))


# ------------------------------------------------------------------ exhaustive inputs
@pytest.mark.parametrize("name", list(F6))
@pytest.mark.parametrize("src", ["float16", "bfloat16"])
def test_every_16bit_input(isa, name, src):
    """All 2^16 float16 (bfloat16) x with scale 1 of the same type: y is ml_dtypes' cast of x
    (which saturates), unpacked and packed (ONNX's bytes), and the same from float32 x."""
    dt = F6[name][0]
    x = ALL16.view(np.float16 if src == "float16" else BF16)
    one = np.ones((), x.dtype)
    with np.errstate(all="ignore"):
        want = x.astype(dt)
        x32 = x.astype(np.float32)
    assert_same(qsimd.quantize_linear(x, one, output_dtype=name), want, f"{src} -> {name}")
    assert qsimd.quantize_linear(x, one, output_dtype=name, packed=True).tobytes() == \
        onnx_raw(want)
    assert_same(qsimd.quantize_linear(x32, np.float32(1), output_dtype=name), want,
                f"float32({src}) -> {name}")
    assert qsimd.quantize_linear(x32, np.float32(1), output_dtype=name, packed=True).tobytes() \
        == onnx_raw(want)


@pytest.mark.parametrize("out", [None, "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(F6))
def test_every_code_dequantized(isa, name, out):
    """All 64 codes (and codes with junk in the two high bits, which are ignored) times
    scales of every type, against the reference; packed at every phase."""
    dt = F6[name][0]
    x = codes(dt)
    junk = (np.arange(256, dtype=np.uint32).astype(np.uint8)).view(dt)
    for sdt, sv in [(np.float32, 0.37), (np.float16, -3.5), (BF16, 1e-30), (E8M0, 2.0**-20),
                    (np.float32, 0.0), (np.float32, np.inf), (np.float32, 1e-45),
                    (np.float32, 3e38)]:
        s = np.array(sv, sdt)
        code = FLOAT_TYPES[out][1] if out else None
        want = ref_dq(x, s, output_dtype=code)
        assert_same(qsimd.dequantize_linear(x, s, output_dtype=out), want, f"{name} * {s!r}",
                    count=True)
        with np.errstate(all="ignore"):
            wj = (junk.view(np.uint8) & np.uint8(0x3f)).view(dt).astype(np.float32) * \
                s.astype(np.float32)
        odt = np.dtype(out) if out else s.dtype
        with np.errstate(all="ignore"):
            assert_same(qsimd.dequantize_linear(junk, s, output_dtype=out), wj.astype(odt),
                        "high bits ignored")
        for k in range(4):   # packed data starting at every slot of a 3-byte group
            xs = x[k:]
            pt = qsimd.PackedTensor(np.frombuffer(onnx_raw(xs), np.uint8), name, xs.shape)
            assert_same(qsimd.dequantize_linear(pt, s, output_dtype=out), want[k:],
                        f"packed from {k}")


# ------------------------------------------------------------------ boundaries
@pytest.mark.parametrize("name", list(F6))
def test_boundaries_vs_reference(isa, name):
    dt, code = F6[name]
    q = boundaries(dt)
    for s in (np.float32(1), np.float32(2.0**-7), np.float32(-4), np.float32(0.3),
              np.float32(1e-40), np.float32(1e30)):
        with np.errstate(all="ignore"):
            x = (q * s).astype(np.float32)
        want = ref_q(x, np.array(s), output_dtype=code)
        for sat in (True, False):   # no effect on float6
            got = qsimd.quantize_linear(x, s, output_dtype=name, saturate=sat)
            assert_same(got, want, f"{name} scale={s}", count=True)
        p = qsimd.quantize_linear(x, s, output_dtype=name, packed=True)
        assert p.tobytes() == onnx_raw(want)


@pytest.mark.parametrize("name", list(F6))
def test_boundaries_other_x_types(isa, name):
    """The same places from float16, bfloat16 and int32 x (float64 quotients)."""
    dt, code = F6[name]
    q = boundaries(dt)
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
        want = ref_q(x, np.array(s), output_dtype=code)
        got = qsimd.quantize_linear(x, np.array(s), output_dtype=name)
        assert_same(got, want, f"{xt} / {np.asarray(s).dtype} -> {name}", count=True)


# ------------------------------------------------------------------ random differential
def targets(rng, dt, n):
    b = boundaries(dt)
    pick = rng.integers(0, 3, n)
    top = float(ml_dtypes.finfo(dt).max)
    return np.select([pick == 0, pick == 1],
                     [rng.choice(b, n), rng.normal(0, top / 3, n)],
                     rng.choice([-1, 1], n) * 2.0 ** rng.uniform(-20, 20, n))


def scales(rng, n, sdt):
    if sdt == E8M0:
        return rng.integers(100, 150, n).astype(np.uint8).view(E8M0)
    if sdt == np.int32:
        return rng.choice([1, 2, 3, 7, -5, 1000], n).astype(np.int32)
    v = rng.choice([-1, 1], n) * 2.0 ** rng.uniform(-6, 6, n)
    v = np.where(rng.random(n) < 0.3, np.round(v * 4) / 4 + 0.25, v)
    return v.astype(sdt)


def make_case(seed, name, xt, stn, gran, with_zp):
    rng = np.random.default_rng(seed)
    dt, code = F6[name]
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
    scale = scales(rng, int(np.prod(sshape, dtype=np.int64)), sdt).reshape(sshape)
    zp = None
    if with_zp:
        zp = rng.choice(codes(dt), scale.shape).reshape(scale.shape)   # every value, +-0
    sfull = np.broadcast_to(ref_broadcast(scale, shape, axis, block), shape)
    n = int(np.prod(shape, dtype=np.int64))
    with np.errstate(all="ignore"):
        v = targets(rng, dt, n).reshape(shape) * sfull.astype(np.float64)
        if xdt == np.int32:
            x = np.clip(np.rint(np.nan_to_num(v)), -2**31, 2**31 - 1).astype(np.int32)
        else:
            x = v.astype(xdt)
    return x, scale, zp, axis, block, code


def run_case(x, scale, zp, axis, block, code, precision, what):
    want = ref_q(x, scale, zp, axis=axis, block_size=block,
                 output_dtype=code if zp is None else None, precision=PRECISIONS[precision])
    kw = {} if zp is not None else {"output_dtype": code}
    got = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block, precision=precision,
                                **kw)
    assert_same(got, want, what, count=True)
    p = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block, precision=precision,
                              packed=True, **kw)
    assert p.tobytes() == onnx_raw(want), f"packed {what}"
    return want


@st.composite
def params(draw):
    return dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        name=draw(st.sampled_from(list(F6))),
        xt=draw(st.sampled_from(list(Q_IN_TYPES))),
        stn=draw(st.sampled_from(list(SCALE_TYPES))),
        gran=draw(st.sampled_from(["tensor", "axis", "block"])),
        with_zp=draw(st.booleans()),
        precision=draw(st.sampled_from([None, None, "float32", "float16", "bfloat16"])),
    )


@settings(max_examples=budget(300))
@given(p=params())
def test_quantize_random(isa, p):
    case = make_case(p["seed"], p["name"], p["xt"], p["stn"], p["gran"], p["with_zp"])
    run_case(*case, p["precision"], str(p))


@pytest.mark.parametrize("stn", list(SCALE_TYPES))
@pytest.mark.parametrize("xt", list(Q_IN_TYPES))
def test_quantize_every_type(isa, xt, stn):
    """Every x type x scale type x float6 type x granularity x precision, with and without a
    zero point, unpacked and packed."""
    for name, gran, prec, zp in itertools.product(F6, ["tensor", "axis", "block"],
                                                  [None, "float32", "float16", "bfloat16"],
                                                  [False, True]):
        seed = zlib.crc32(repr((xt, stn, name, gran, prec, zp)).encode())
        case = make_case(seed, name, xt, stn, gran, zp)
        run_case(*case, prec, f"{xt}/{stn}->{name} {gran} p={prec} zp={zp}")


@pytest.mark.parametrize("name", list(F6))
def test_dequantize_layouts(isa, name):
    """Per-tensor, per-axis and blocked float6 inputs (zero points none, +-0 or any value;
    ml_dtypes arrays and PackedTensor) against the reference, every scale and output type."""
    dt, code = F6[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.choice(codes(dt), (5, 37))
    pt = qsimd.PackedTensor(np.frombuffer(onnx_raw(x), np.uint8), name, x.shape)
    for (stn, (sdt, _)), out in itertools.product(DQ_SCALE_TYPES.items(),
                                                  [None, "float32", "float16", "bfloat16"]):
        ocode = FLOAT_TYPES[out][1] if out else None
        cases = [(scales(rng, 1, sdt).reshape(()), {}), (scales(rng, 5, sdt), {"axis": 0}),
                 (scales(rng, 37, sdt), {"axis": 1}),
                 (scales(rng, 25, sdt).reshape(5, 5), {"axis": 1, "block_size": 8}),
                 (scales(rng, 3 * 37, sdt).reshape(3, 37), {"axis": 0, "block_size": 2})]
        for s, kw in cases:
            zero = np.zeros(s.shape, np.float32)
            zero.reshape(-1)[1::2] = -0.0
            for zp in (None, zero.astype(dt), rng.choice(codes(dt), s.shape).reshape(s.shape)):
                want = ref_dq(x, s, zp, output_dtype=ocode, **kw)
                what = f"{name} {stn} {out} {kw}"
                assert_same(qsimd.dequantize_linear(x, s, zp, output_dtype=out, **kw), want,
                            what, count=True)
                assert_same(qsimd.dequantize_linear(pt, s, zp, output_dtype=out, **kw), want,
                            "packed " + what)


# SIMD kernels work in vectors of 8..64 elements (packed: groups of 4): every length to 70
LENGTHS = (list(range(0, 71)) + [127, 128, 129, 255, 256, 257, 1023] if not QUICK
           else list(range(0, 35)) + [63, 64, 65, 129])


@pytest.mark.parametrize("name", list(F6))
def test_lengths(isa, name):
    dt, code = F6[name]
    rng = np.random.default_rng(61)
    for n in LENGTHS:
        s = np.float32(rng.choice([0.25, 0.3, -3.0]))
        with np.errstate(all="ignore"):
            x = (targets(rng, dt, n) * s).astype(np.float32)
        want = ref_q(x, np.array(s), output_dtype=code)
        assert_same(qsimd.quantize_linear(x, s, output_dtype=name), want, f"n={n}", count=True)
        raw = onnx_raw(want)
        assert qsimd.quantize_linear(x, s, output_dtype=name, packed=True).tobytes() == raw
        zp = rng.choice(codes(dt), ())
        wz = ref_q(x, np.array(s), np.asarray(zp))
        assert_same(qsimd.quantize_linear(x, s, np.asarray(zp)), wz, f"zp n={n}")
        back = ref_dq(want, np.array(s), np.asarray(zp))
        assert_same(qsimd.dequantize_linear(want, s, np.asarray(zp)), back, f"DQ n={n}")
        pt = qsimd.PackedTensor(np.frombuffer(raw, np.uint8), name, (n,))
        assert_same(qsimd.dequantize_linear(pt, s, np.asarray(zp)), back, f"packed DQ n={n}")
        for b in (3, 8, 17, 33):   # blocked runs starting mid-vector and mid-group
            if b >= n:
                continue
            sb = rng.choice([0.25, 0.3, -3.0, 7.0], -(-n // b)).astype(np.float32)
            zb = rng.choice(codes(dt), sb.shape)
            for z in (None, zb):
                want = ref_q(x, sb, z, axis=0, block_size=b,
                             output_dtype=code if z is None else None)
                kw = {"output_dtype": name} if z is None else {}
                got = qsimd.quantize_linear(x, sb, z, axis=0, block_size=b, **kw)
                assert_same(got, want, f"n={n} b={b}", count=True)
                p = qsimd.quantize_linear(x, sb, z, axis=0, block_size=b, packed=True, **kw)
                assert p.tobytes() == onnx_raw(want), f"packed n={n} b={b}"
                assert p.dtype == np.dtype(dt) and p.shape == (n,)
                pt = p   # quantize's PackedTensor is dequantize's input as it is
                assert_same(qsimd.dequantize_linear(pt, sb, z, axis=0, block_size=b),
                            ref_dq(want, sb, z, axis=0, block_size=b), f"DQ n={n} b={b}")


def test_threads_and_pieces(isa):
    """Work split across threads cuts packed float6 only at whole 3-byte groups; a strided x
    is processed in pieces: the same bytes either way."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(1_100_003) * 4).astype(np.float32)
    for name in F6:
        one = qsimd.quantize_linear(x, np.float32(0.7), output_dtype=name, packed=True)
        two = qsimd.quantize_linear(x, np.float32(0.7), output_dtype=name, packed=True,
                                    num_threads=2)
        assert one.tobytes() == two.tobytes()
        pt = one
        assert_same(qsimd.dequantize_linear(pt, np.float32(0.7), num_threads=2),
                    qsimd.dequantize_linear(pt, np.float32(0.7)), name)
    xs = (rng.standard_normal((600, 1001)) * 4).astype(np.float32)[:, ::2]   # strided
    for name, (dt, code) in F6.items():
        want = ref_q(np.ascontiguousarray(xs), np.array(np.float32(0.5)), output_dtype=code)
        assert_same(qsimd.quantize_linear(xs, np.float32(0.5), output_dtype=name), want, name)
        assert qsimd.quantize_linear(xs, np.float32(0.5), output_dtype=name,
                                     packed=True).tobytes() == onnx_raw(want)


# ------------------------------------------------------------------ packing, names, errors
@pytest.mark.parametrize("name", list(F6))
def test_pack_unpack_match_onnx(name):
    dt = F6[name][0]
    rng = np.random.default_rng(1)
    for n in range(0, 41):
        a = rng.choice(codes(dt), n)
        raw = qsimd.pack(a)
        assert raw.dtype == np.uint8 and raw.shape == ((n * 6 + 7) // 8,)
        assert raw.tobytes() == onnx_raw(a) == numpy_helper._pack_6bit(a.view(np.uint8)).tobytes()
        back = qsimd.unpack(raw, name, (n,))
        assert back.dtype == dt
        assert back.view(np.uint8).tolist() == a.view(np.uint8).tolist()
        assert back.view(np.uint8).tolist() == \
            numpy_helper._unpack_6bit(raw, (n,)).reshape(-1).tolist()
    m = rng.choice(codes(dt), (3, 5))
    assert qsimd.unpack(qsimd.pack(m), name, m.shape).view(np.uint8).tolist() == \
        m.view(np.uint8).tolist()
    with pytest.raises(ValueError, match="needs 4"):
        qsimd.unpack(np.zeros(3, np.uint8), name, (5,))


@pytest.mark.parametrize("spec,code", [
    ("float6e2m3", 27), ("FLOAT6E2M3", 27), ("TensorProto.FLOAT6E2M3", 27), ("float6_e2m3fn", 27),
    (ml_dtypes.float6_e2m3fn, 27), (TensorProto.FLOAT6E2M3, 27),
    ("float6e3m2", 28), ("float6_e3m2fn", 28), (np.dtype(ml_dtypes.float6_e3m2fn), 28),
    (TensorProto.FLOAT6E3M2, 28)])
def test_output_dtype_spellings(spec, code):
    x = np.array([1.0, -2.5, 100.0], np.float32)
    got = qsimd.quantize_linear(x, np.float32(1), output_dtype=spec)
    assert_same(got, ref_q(x, np.array(np.float32(1)), output_dtype=code))


def test_python_zero_points(isa):
    x = np.array([1.0, -2.0], np.float32)
    got = qsimd.quantize_linear(x, 1.0, 0.5, output_dtype="float6e2m3")
    assert got.astype(np.float32).tolist() == [1.5, -1.5]
    with pytest.raises(ValueError, match="exactly representable"):
        qsimd.quantize_linear(x, 1.0, 0.3, output_dtype="float6e3m2")
    zp = np.zeros((), ml_dtypes.float6_e3m2fn)
    assert qsimd.dequantize_linear([3, -12], np.float32(1), zp).tolist() == [3, -12]


def test_mismatched_zero_point_types():
    x = np.ones(4, np.float32)
    e23 = np.zeros((), ml_dtypes.float6_e2m3fn)
    e32 = np.zeros((), ml_dtypes.float6_e3m2fn)
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.quantize_linear(x, 1.0, e23, output_dtype="float6e3m2")
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.quantize_linear(x, 1.0, np.zeros((), ml_dtypes.float4_e2m1fn),
                              output_dtype="float6e2m3")
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.dequantize_linear(x.astype(ml_dtypes.float6_e2m3fn), 1.0, e32)
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.dequantize_linear(x.astype(ml_dtypes.float6_e3m2fn), 1.0, np.uint8(0))
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.dequantize_linear(qsimd.PackedTensor(qsimd.pack(x.astype(e23.dtype)),
                                                   "float6e2m3", (4,)), 1.0, e32)
    # the reference rejects the same combinations
    with pytest.raises(Exception):
        ref_q(x, np.array(np.float32(1)), e23, output_dtype=TensorProto.FLOAT6E3M2)
    with pytest.raises(Exception):
        ref_dq(x.astype(ml_dtypes.float6_e2m3fn), np.array(np.float32(1)), np.uint8(0))


def test_packed_errors():
    x = np.ones(5, np.float32)
    with pytest.raises(ValueError, match="needs 4"):
        qsimd.dequantize_linear(qsimd.PackedTensor(np.zeros(3, np.uint8), "float6e2m3", (5,)),
                                1.0)
    with pytest.raises(ValueError, match="out must have shape"):
        qsimd.quantize_linear(x, 1.0, output_dtype="float6e3m2", packed=True,
                              out=np.empty(5, np.uint8))
    out = np.empty(4, np.uint8)
    assert qsimd.quantize_linear(x, 1.0, output_dtype="float6e3m2", packed=True,
                                 out=out).data is out
    assert out.tobytes() == onnx_raw(x.astype(ml_dtypes.float6_e3m2fn))


C_PROGRAM = r"""
#include <stdio.h>
#include <math.h>
#include <qsimd.h>
int main(void)
{
    float x[7] = {0.5f, -2.75f, 7.6f, INFINITY, NAN, -0.0f, 100.0f}, s = 1.0f;
    unsigned char y[6] = {0}, u[7];
    float back[7];
    int64_t shape[1] = {7};
    qsimd_error err;
    for (int dt = QSIMD_FLOAT6E2M3; dt <= QSIMD_FLOAT6E3M2; dt++) {
        qsimd_tensor tx = {x, QSIMD_FLOAT, 1, shape, 0}, ts = {&s, QSIMD_FLOAT, 0, NULL, 0};
        qsimd_tensor tp = {y, dt, 1, shape, 1}, tu = {u, dt, 1, shape, 0};
        qsimd_tensor tb = {back, QSIMD_FLOAT, 1, shape, 0};
        if (qsimd_quantize_linear(&tx, &ts, NULL, NULL, &tp, &err) ||
            qsimd_quantize_linear(&tx, &ts, NULL, NULL, &tu, &err) ||
            qsimd_dequantize_linear(&tp, &ts, NULL, NULL, &tb, &err)) {
            printf("error %s\n", err.message);
            return 1;
        }
        for (int i = 0; i < 6; i++) printf("%02x", y[i]);
        printf(" ");
        for (int i = 0; i < 7; i++) printf("%02x", u[i]);
        for (int i = 0; i < 7; i++) printf(" %g", back[i]);
        printf("\n");
    }
    return 0;
}
"""


def test_c_api(tmp_path):
    """The C API: QSIMD_FLOAT6E2M3 / QSIMD_FLOAT6E3M2 descriptors, packed and one per byte,
    built against the package's header and static library, against the reference."""
    import os
    import shutil
    import subprocess
    import sys
    import sysconfig
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    lib = os.path.join(qsimd.get_library_dir(), "libqsimd.a")
    if sys.platform == "win32" or shutil.which(cc) is None or not os.path.exists(lib):
        pytest.skip("needs a Unix C compiler and the package's static library")
    src, exe = tmp_path / "f6.c", tmp_path / "f6"
    src.write_text(C_PROGRAM)
    subprocess.run([cc, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I",
                    qsimd.get_include(), str(src), "-o", str(exe), lib, "-lm", "-pthread"],
                   check=True, capture_output=True)
    try:
        out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True)
    except OSError as e:
        pytest.skip(f"cannot execute a compiled program here: {e}")
    x = np.array([0.5, -2.75, 7.6, np.inf, np.nan, -0.0, 100.0], np.float32)
    for line, (name, (dt, code)) in zip(out.stdout.splitlines(), F6.items()):
        want = ref_q(x, np.array(np.float32(1)), output_dtype=code)
        packed, unpacked, *vals = line.split()
        assert bytes.fromhex(packed) == onnx_raw(want), name
        assert bytes.fromhex(unpacked) == want.view(np.uint8).tobytes(), name
        back = ref_dq(want, np.array(np.float32(1)))
        assert [float(v) for v in vals] == back.tolist(), name
