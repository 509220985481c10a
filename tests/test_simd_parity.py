"""Every SIMD instruction set gives the same bytes as the scalar one, through the public API.

For each ISA that this build has and this CPU runs (other than "scalar"), every call below is
made twice, once with qsimd.set_isa("scalar") and once with the ISA, and the results must be
identical bit for bit: all output and input types, per-tensor / per-axis / blocked layouts,
packed and unpacked sub-byte data, lengths 0..300 and large, adversarial values, unaligned
views. QSIMD_TEST_QUICK=1 shrinks the sweep about five times (for emulated runs).
"""
import os

import ml_dtypes
import numpy as np
import pytest

import qsimd
from qsimd import _core

ISAS = [i for i in qsimd.available_isas() if i != "scalar"]
QUICK = os.environ.get("QSIMD_TEST_QUICK", "") not in ("", "0")

pytestmark = pytest.mark.skipif(not ISAS, reason="only the scalar instruction set is available")

OUT_TYPES = [np.uint8, np.int8, np.uint16, np.int16, ml_dtypes.uint4, ml_dtypes.int4,
             ml_dtypes.uint2, ml_dtypes.int2]
SUBBYTE = {np.dtype(ml_dtypes.uint4): 4, np.dtype(ml_dtypes.int4): 4,
           np.dtype(ml_dtypes.uint2): 2, np.dtype(ml_dtypes.int2): 2}
# ONNX codes of the sub-byte types, for the bridge call that takes packed input
ONNX_CODE = {np.dtype(ml_dtypes.uint4): 21, np.dtype(ml_dtypes.int4): 22,
             np.dtype(ml_dtypes.uint2): 25, np.dtype(ml_dtypes.int2): 26}
FLOAT_OUT = [np.float32, np.float16, ml_dtypes.bfloat16]
DQ_IN = OUT_TYPES + [np.int32, np.uint32]

if QUICK:
    LENGTHS = list(range(0, 301, 7)) + [4099]
else:
    LENGTHS = list(range(0, 301)) + [4099, 65537]

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.1754942e-38,
                     1.1754944e-38, 3.4028235e38, -3.4028235e38, 2.0 ** 31, -(2.0 ** 31),
                     2147483520.0, 2.0 ** 32, -(2.0 ** 40), 8388609.0, 0.5, -0.5, 1.5, -1.5,
                     2.5, 65504.0, 65520.0, 6.1e-5, 3.0e-8], dtype=np.float32)
NAN_BITS = np.array([0x7F800001, 0xFFC00001, 0x7FBFFFFF, 0x7FFFFFFF], dtype=np.uint32)


def limits(dt):
    dt = np.dtype(dt)
    if dt in SUBBYTE:
        info = ml_dtypes.iinfo(dt)
    else:
        info = np.iinfo(dt)
    return int(info.min), int(info.max)


def adversarial(rng, n, s=1.0, lo=-10, hi=10):
    """float32 values that stress x / s around the output range [lo, hi]."""
    with np.errstate(all="ignore"):
        cat = rng.integers(0, 9, n)
        out = ((lo - 4) + rng.random(n) * (hi - lo + 8)).astype(np.float32) * np.float32(s)
        ties = ((rng.integers(lo - 3, hi + 4, n) + 0.5) * s).astype(np.float32)
        edges = ((np.where(rng.random(n) < 0.5, lo, hi) + rng.integers(-1, 2, n) * 0.5) * s)
        edges = edges.astype(np.float32)
        nudge = rng.integers(-1, 2, n).astype(np.int32)
        eb = edges.view(np.int32)
        finite = np.isfinite(edges) & (edges != 0)
        edges = np.where(finite, (eb + nudge).view(np.float32), edges)
        spec = SPECIALS[rng.integers(0, len(SPECIALS), n)]
        bits = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        nans = NAN_BITS[rng.integers(0, len(NAN_BITS), n)].view(np.float32)
        big = (np.ldexp(1.0 + rng.random(n), rng.integers(20, 41, n)) *
               np.where(rng.random(n) < 0.5, -1, 1) * s).astype(np.float32)
        choices = [out, out, ties, ties, edges, spec, bits, nans, big]
        res = np.choose(cat, choices).astype(np.float32)
    return res


def as_type(rng, v, dt):
    """v (float32) as x of type dt, with some raw bit patterns for the 16-bit floats."""
    dt = np.dtype(dt)
    shape, v = v.shape, v.reshape(-1)
    return _as_type(rng, v, dt).reshape(shape)


def _as_type(rng, v, dt):
    with np.errstate(all="ignore"):
        if dt == np.float32:
            return v
        if dt == np.int32:
            r = np.where(np.isfinite(v) & (np.abs(v) < 2e9), v, 0).astype(np.int64)
            raw = rng.integers(-2 ** 31, 2 ** 31, v.size)
            pick = rng.random(v.size) < 0.2
            return np.where(pick, raw, r).astype(np.int32)
        x = v.astype(dt)
        raw = rng.integers(0, 2 ** 16, v.size, dtype=np.uint32).astype(np.uint16).view(dt)
        return np.where(rng.random(v.size) < 0.15, raw, x)


def view_at(rng, a, byte_misalign=False):
    """A copy of `a` that starts 1..3 elements (or, rarely, one byte) into a larger buffer."""
    a = np.ascontiguousarray(a)
    if byte_misalign:
        buf = np.zeros(a.nbytes + 1, np.uint8)
        buf[1:] = np.frombuffer(a.tobytes(), np.uint8)
        return np.frombuffer(buf.data, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    k = int(rng.integers(0, 4))
    big = np.empty(a.size + k, a.dtype)
    v = big[k:].reshape(a.shape)
    v[...] = a
    return v


def raw(a):
    a = np.asarray(a)
    return np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8), a.dtype.itemsize


def assert_same(a, b, what):
    if isinstance(a, qsimd.PackedTensor):   # fields by equality, the bytes bit for bit
        assert isinstance(b, qsimd.PackedTensor), what
        assert a.dtype == b.dtype and a.shape == b.shape, what
        a, b = a.data, b.data
    if isinstance(a, tuple):
        for i, (u, v) in enumerate(zip(a, b)):
            assert_same(u, v, f"{what}[{i}]")
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    ra, size = raw(a)
    rb, _ = raw(b)
    if not np.array_equal(ra, rb):
        i = int(np.flatnonzero(ra != rb)[0]) // size
        fa, fb = a.reshape(-1), b.reshape(-1)
        raise AssertionError(f"{what}: element {i} of {a.size}: scalar {fa[i]!r} "
                             f"simd {fb[i]!r}")


def both(isa, fn):
    try:
        qsimd.set_isa("scalar")
        r0 = fn()
        qsimd.set_isa(isa)
        r1 = fn()
    finally:
        qsimd.set_isa(None)
    return r0, r1


@pytest.fixture(params=ISAS)
def isa(request):
    yield request.param
    qsimd.set_isa(None)


def scale_value(rng, dt=np.float32, adversarial_ok=True):
    r = rng.random()
    if adversarial_ok and r < 0.08:
        s = [0.0, -0.0, np.nan, np.inf, -1.5, 1e-40, 1e30][int(rng.integers(0, 7))]
    elif r < 0.4:
        s = 2.0 ** int(rng.integers(-4, 5))         # exact ties
    else:
        s = float(np.ldexp(1.0 + rng.random(), int(rng.integers(-10, 4))))
    with np.errstate(all="ignore"):
        return np.array(s, dtype=dt)


# ---------------------------------------------------------------- quantize, per tensor

@pytest.mark.parametrize("xdt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32],
                         ids=["f32", "f16", "bf16", "i32"])
def test_quantize_per_tensor_lengths(isa, xdt):
    rng = np.random.default_rng(1)
    lengths = LENGTHS if xdt == np.float32 else LENGTHS[::3] + LENGTHS[-1:]
    for n in lengths:
        for k, odt in enumerate(OUT_TYPES):
            lo, hi = limits(odt)
            zp = np.array(int(rng.integers(lo, hi + 1)) if k % 3 else (lo, hi)[n % 2],
                          dtype=odt)
            # same-type scale selects the float16 / bfloat16 quotient
            sdt = xdt if (xdt in (np.float16, ml_dtypes.bfloat16) and n % 2) else np.float32
            s = scale_value(rng, sdt, adversarial_ok=n % 5 == 0)
            base = float(s) if np.isfinite(float(s)) and float(s) != 0 else 1.0
            v = adversarial(rng, n, base, lo - int(zp), hi - int(zp))
            x = view_at(rng, as_type(rng, v, xdt), byte_misalign=(n % 17 == 3))
            use_zp = None if n % 4 == 1 else zp
            packs = [False, True] if np.dtype(odt) in SUBBYTE else [False]
            for packed in packs:
                def f():
                    return qsimd.quantize_linear(x, s, use_zp, output_dtype=odt, packed=packed)
                r0, r1 = both(isa, f)
                assert_same(r0, r1, f"quantize {np.dtype(xdt).name}->{np.dtype(odt).name} "
                                    f"n={n} packed={packed} isa={isa}")


@pytest.mark.parametrize("precision", [np.float32, np.float16, ml_dtypes.bfloat16],
                         ids=["p32", "p16", "pbf16"])
def test_quantize_precision(isa, precision):
    rng = np.random.default_rng(2)
    for n in LENGTHS[::4]:
        for odt in (np.uint8, np.int8, ml_dtypes.int4):
            for xdt in (np.float32, np.float16, ml_dtypes.bfloat16, np.int32):
                lo, hi = limits(odt)
                s = scale_value(rng)
                v = adversarial(rng, n, 1.0, lo, hi)
                x = view_at(rng, as_type(rng, v, xdt))

                def f():
                    return qsimd.quantize_linear(x, s, output_dtype=odt, precision=precision,
                                                 packed=np.dtype(odt) in SUBBYTE)
                r0, r1 = both(isa, f)
                assert_same(r0, r1, f"precision {np.dtype(precision).name} x "
                                    f"{np.dtype(xdt).name} n={n}")


# ---------------------------------------------------------------- quantize, layouts

def layouts():
    """(shape, axis, block_size) triples: per-axis on inner and last axes, blocked."""
    out = [((5, 37), 1, 0), ((37, 5), 0, 0), ((3, 7, 9), 1, 0), ((2, 3, 130), 2, 0),
           ((4, 300), 1, 0), ((300, 3), 0, 0), ((2, 17, 8), 1, 0), ((1, 1), 0, 0),
           ((3, 0, 4), 1, 0)]
    for b in (16, 32, 128, 7, 33, 1, 3):
        out += [((3, 129), 1, b), ((2, 300), 1, b), ((130, 4), 0, b), ((2, 40, 3), 1, b)]
    out += [((2, 64), 1, 16), ((2, 256), 1, 128), ((4, 33), 1, 17)]
    # channel blocks of NCHW tensors: rows of odd length (packed codes start mid-byte), groups
    # of rows that share a row of entries, of even, odd and uneven counts
    out += [((2, 64, 7, 7), 1, 32), ((1, 20, 5, 5), 1, 6), ((2, 9, 3, 17), 1, 3)]
    if QUICK:
        out = out[::4] + [((2, 300), 1, 32)]
    return out


@pytest.mark.parametrize("odt", OUT_TYPES, ids=lambda d: np.dtype(d).name)
def test_quantize_layouts(isa, odt):
    rng = np.random.default_rng(3)
    lo, hi = limits(odt)
    for shape, axis, block in layouts():
        for xdt in (np.float32, np.float16, ml_dtypes.bfloat16):
            d = shape[axis]
            sshape = list(shape)
            if block:
                sshape[axis] = -(-d // block)
            else:
                sshape = [d]
            nscale = int(np.prod(sshape))
            sdt = xdt if rng.random() < 0.3 else np.float32
            s = np.array([scale_value(rng, sdt, adversarial_ok=i % 11 == 5)
                          for i in range(nscale)], dtype=sdt).reshape(sshape)
            zp = rng.integers(lo, hi + 1, nscale).astype(odt).reshape(sshape)
            if nscale:
                zp.reshape(-1)[0] = lo
                zp.reshape(-1)[-1] = hi
            n = int(np.prod(shape))
            v = adversarial(rng, n, 0.5, -40, 40).reshape(shape)
            x = view_at(rng, as_type(rng, v, xdt))
            for packed in ([False, True] if np.dtype(odt) in SUBBYTE else [False]):
                for z in (zp, None):
                    def f():
                        return qsimd.quantize_linear(x, s, z, axis=axis, block_size=block,
                                                     output_dtype=odt, packed=packed)
                    r0, r1 = both(isa, f)
                    assert_same(r0, r1, f"quantize {np.dtype(xdt).name} shape={shape} "
                                        f"axis={axis} block={block} packed={packed} "
                                        f"zp={z is not None}")


def test_quantize_out_unaligned(isa):
    """out= views that start 1..3 elements into a buffer (written in place)."""
    rng = np.random.default_rng(4)
    for n in LENGTHS[::5]:
        for odt in (np.uint8, np.int16):
            v = adversarial(rng, n, 1.0, *limits(odt))
            res = []
            size = np.dtype(odt).itemsize
            k = 1 + n % 3
            for name in ("scalar", isa):
                qsimd.set_isa(name)
                raw_buf = np.full((n + 4) * size, 0x5A, np.uint8)
                out = raw_buf[k * size:(k + n) * size].view(odt)
                qsimd.quantize_linear(v, np.float32(1.0), output_dtype=odt, out=out)
                res.append(raw_buf)
            qsimd.set_isa(None)
            assert_same(res[0], res[1], f"out= unaligned {np.dtype(odt).name} n={n}")


# ---------------------------------------------------------------- dequantize

def random_codes(rng, n, dt):
    dt = np.dtype(dt)
    if dt in SUBBYTE:
        # whole random bytes: the high bits of unpacked sub-byte codes must be ignored
        return rng.integers(0, 256, n, dtype=np.uint16).astype(np.uint8).view(dt)
    lo, hi = limits(dt)
    c = rng.integers(lo, hi + 1, n, dtype=np.int64)
    pick = rng.random(n) < 0.1
    c = np.where(pick, np.where(rng.random(n) < 0.5, lo, hi), c)
    return c.astype(dt)


def dq_scale(rng, shape, adversarial_ok=True):
    n = int(np.prod(shape))
    s = np.ldexp(1.0 + rng.random(n), rng.integers(-12, 6, n)) * np.where(
        rng.random(n) < 0.2, -1, 1)
    # few mantissa bits: products land exactly on float16 / bfloat16 ties
    short = np.ldexp(rng.integers(1, 8192, n).astype(np.float64), rng.integers(-16, -3, n))
    s = np.where(rng.random(n) < 0.3, short, s)
    if adversarial_ok:
        spec = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, 3e38, 2.0 ** -20, 4096.0])
        s = np.where(rng.random(n) < 0.1, spec[rng.integers(0, len(spec), n)], s)
    with np.errstate(all="ignore"):
        return s.astype(np.float32).reshape(shape)


@pytest.mark.parametrize("xdt", DQ_IN, ids=lambda d: np.dtype(d).name)
def test_dequantize_lengths(isa, xdt):
    rng = np.random.default_rng(5)
    lo, hi = limits(xdt)
    lengths = LENGTHS[::2] + LENGTHS[-1:]
    for n in lengths:
        x = view_at(rng, random_codes(rng, n, xdt), byte_misalign=(n % 19 == 4))
        s = dq_scale(rng, (), adversarial_ok=n % 3 == 0)
        zp = None if n % 4 == 1 else np.array(int(rng.integers(lo, hi + 1)), dtype=xdt)
        for odt in FLOAT_OUT:
            def f():
                return qsimd.dequantize_linear(x, s, zp, output_dtype=odt)
            r0, r1 = both(isa, f)
            assert_same(r0, r1, f"dequantize {np.dtype(xdt).name}->{np.dtype(odt).name} n={n}")


@pytest.mark.parametrize("xdt", DQ_IN, ids=lambda d: np.dtype(d).name)
def test_dequantize_layouts(isa, xdt):
    rng = np.random.default_rng(6)
    lo, hi = limits(xdt)
    for shape, axis, block in layouts():
        d = shape[axis]
        if block:
            sshape = list(shape)
            sshape[axis] = -(-d // block)
        else:
            sshape = [d]
        n = int(np.prod(shape))
        x = view_at(rng, random_codes(rng, n, xdt).reshape(shape))
        s = dq_scale(rng, sshape, adversarial_ok=True)
        zp = rng.integers(lo, hi + 1, int(np.prod(sshape)), dtype=np.int64).astype(xdt)
        zp = zp.reshape(sshape)
        for odt in FLOAT_OUT:
            for z in (zp, None):
                def f():
                    return qsimd.dequantize_linear(x, s, z, axis=axis, block_size=block,
                                                   output_dtype=odt)
                r0, r1 = both(isa, f)
                assert_same(r0, r1, f"dequantize {np.dtype(xdt).name}->{np.dtype(odt).name} "
                                    f"shape={shape} axis={axis} block={block}")


def dequantize_packed(data, xdt, shape, scale, zp, axis, block, odt):
    """Dequantize ONNX packed bytes (the public API takes ml_dtypes arrays; the bridge also
    takes raw packed bytes, which is what the packed-input kernels serve)."""
    code = ONNX_CODE[np.dtype(xdt)]
    y = np.empty(shape, np.dtype(odt))
    yt = {np.dtype(np.float32): 1, np.dtype(np.float16): 10,
          np.dtype(ml_dtypes.bfloat16): 16}[np.dtype(odt)]
    assert _core.dequantize_fast(qsimd.PackedTensor(data, code, shape), scale, zp, axis, block,
                                 yt, y, None) is y   # the fast path took it
    return y


@pytest.mark.parametrize("xdt", list(SUBBYTE), ids=lambda d: np.dtype(d).name)
def test_dequantize_packed(isa, xdt):
    rng = np.random.default_rng(7)
    lo, hi = limits(xdt)
    cases = [((n,), 0, 0) for n in LENGTHS[::3]] + layouts()
    for shape, axis, block in cases:
        d = shape[axis]
        if block:
            sshape = list(shape)
            sshape[axis] = -(-d // block)
        elif len(shape) == 1:
            sshape = []
        else:
            sshape = [d]
        n = int(np.prod(shape))
        nb = (n * SUBBYTE[xdt] + 7) // 8
        data = view_at(rng, rng.integers(0, 256, nb, dtype=np.uint16).astype(np.uint8))
        s = dq_scale(rng, sshape)
        zp = rng.integers(lo, hi + 1, int(np.prod(sshape)), dtype=np.int64).astype(xdt)
        zp = zp.reshape(sshape)
        for odt in FLOAT_OUT:
            for z in (zp, None):
                def f():
                    return dequantize_packed(data, xdt, shape, s, z, axis, block, odt)
                r0, r1 = both(isa, f)
                assert_same(r0, r1, f"dequantize packed {np.dtype(xdt).name}->"
                                    f"{np.dtype(odt).name} shape={shape} block={block}")
                # and the same values as the unpacked path
                unpacked = qsimd.unpack(data, xdt, shape)
                qsimd.set_isa(isa)
                try:
                    r2 = qsimd.dequantize_linear(unpacked, s, z, axis=axis, block_size=block,
                                                 output_dtype=odt)
                finally:
                    qsimd.set_isa(None)
                assert_same(r1, r2, f"packed vs unpacked {np.dtype(xdt).name} shape={shape}")


# ---------------------------------------------------------------- dynamic quantize

def dynamic_inputs(rng):
    lengths = [n for n in LENGTHS if n > 0]
    for n in lengths:
        kind = n % 7
        with np.errstate(all="ignore"):
            if kind == 0:
                x = adversarial(rng, n, 1.0, -100, 100)
            elif kind == 1:      # zeros of both signs, some NaN
                x = np.where(rng.random(n) < 0.5, 0.0, -0.0).astype(np.float32)
                x[rng.random(n) < 0.2] = np.nan
            elif kind == 2:      # all NaN
                x = np.full(n, np.nan, np.float32)
            elif kind == 3:      # non-negative with a late zero minimum
                x = (rng.random(n) + 0.5).astype(np.float32)
                x[-1 - int(rng.integers(0, n))] = -0.0
                x[-1 - int(rng.integers(0, n))] = 0.0
            elif kind == 4:      # infinities
                x = np.where(rng.random(n) < 0.1, np.inf, rng.standard_normal(n))
                x = x.astype(np.float32)
                x[rng.random(n) < 0.05] = -np.inf
            else:
                x = (rng.standard_normal(n) * 10.0 ** int(rng.integers(-3, 4))).astype(np.float32)
                x[rng.random(n) < 0.02] = np.nan
        yield view_at(rng, x, byte_misalign=(n % 23 == 5))


def test_dynamic_quantize(isa):
    rng = np.random.default_rng(8)
    for x in dynamic_inputs(rng):
        r0, r1 = both(isa, lambda: qsimd.dynamic_quantize_linear(x))
        assert_same(r0, r1, f"dynamic_quantize_linear n={x.size}")


# ---------------------------------------------------------------- float8 / float4

FP_OUT = {"float8e4m3fn": ml_dtypes.float8_e4m3fn, "float8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
          "float8e5m2": ml_dtypes.float8_e5m2, "float8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
          "float4e2m1": ml_dtypes.float4_e2m1fn}


def fp_values(rng, dt, n, s):
    """float32 x whose quotients by s hit the format's values, ties, neighbours, overflow,
    subnormals and specials."""
    codes = np.arange(16 if np.dtype(dt) == ml_dtypes.float4_e2m1fn else 256, dtype=np.uint8)
    vals = codes.view(dt).astype(np.float64)
    vals = np.unique(vals[np.isfinite(vals)])
    mids = (vals[:-1] + vals[1:]) / 2
    pool = np.concatenate([vals, mids, [vals[-1] * 1.5, vals[-1] * 4, 1e30]]).astype(np.float32)
    with np.errstate(all="ignore"):
        q = pool[rng.integers(0, pool.size, n)]
        near = np.nextafter(q, np.where(rng.random(n) < 0.5, np.inf, -np.inf).astype(np.float32))
        q = np.where(rng.random(n) < 0.3, near, q)
        x = (q * np.float32(s)).astype(np.float32)
        spec = adversarial(rng, n, float(s), -10, 10)
    return np.where(rng.random(n) < 0.2, spec, x).astype(np.float32)


@pytest.mark.parametrize("otn", list(FP_OUT))
def test_float8_quantize_lengths(isa, otn):
    rng = np.random.default_rng(11)
    dt = FP_OUT[otn]
    for n in LENGTHS:
        s = scale_value(rng, adversarial_ok=n % 7 == 0)
        base = float(s) if np.isfinite(float(s)) and float(s) != 0 else 1.0
        x = view_at(rng, fp_values(rng, dt, n, base), byte_misalign=(n % 17 == 3))
        zp = np.array(rng.choice([0.0, -0.0, 0.5, -1.5, 6.0]), np.float32).astype(dt) \
            if otn == "float4e2m1" and n % 3 else None
        for sat in (True, False):
            for packed in ([False, True] if otn == "float4e2m1" else [False]):
                def f():
                    return qsimd.quantize_linear(x, s, zp, output_dtype=otn, saturate=sat,
                                                 packed=packed)
                r0, r1 = both(isa, f)
                assert_same(r0, r1, f"{otn} n={n} sat={sat} packed={packed}")


@pytest.mark.parametrize("otn", ["float8e4m3fn", "float8e5m2", "float4e2m1"])
def test_float8_layouts(isa, otn):
    rng = np.random.default_rng(12)
    dt = FP_OUT[otn]
    for shape, axis, block in layouts():
        d = shape[axis]
        sshape = list(shape)
        if block:
            sshape[axis] = -(-d // block)
        else:
            sshape = [d]
        nscale = int(np.prod(sshape))
        s = np.array([scale_value(rng, adversarial_ok=i % 11 == 5) for i in range(nscale)],
                     np.float32).reshape(sshape)
        n = int(np.prod(shape))
        x = view_at(rng, fp_values(rng, dt, n, 0.75).reshape(shape))
        zp = None
        if otn == "float4e2m1":
            zp = rng.choice([0.0, -0.0, 0.5, -1.5, 6.0], nscale).astype(np.float32).astype(
                dt).reshape(sshape)
        for packed in ([False, True] if otn == "float4e2m1" else [False]):
            for sat in (True, False):
                def f():
                    return qsimd.quantize_linear(x, s, zp, axis=axis, block_size=block,
                                                 output_dtype=otn, packed=packed, saturate=sat)
                r0, r1 = both(isa, f)
                assert_same(r0, r1, f"{otn} shape={shape} axis={axis} block={block} "
                                    f"packed={packed} sat={sat}")
        codes = rng.integers(0, 256, shape).astype(np.uint8)
        xq = (codes & 15 if otn == "float4e2m1" else codes).view(dt)
        for odt in (None, np.float16, ml_dtypes.bfloat16):
            r0, r1 = both(isa, lambda: qsimd.dequantize_linear(
                xq, s, axis=axis, block_size=block, output_dtype=odt))
            assert_same(r0, r1, f"DQ {otn} shape={shape} axis={axis} block={block} {odt}")
        if otn == "float4e2m1":
            pt = qsimd.PackedTensor(qsimd.pack(xq), otn, xq.shape)
            r0, r1 = both(isa, lambda: qsimd.dequantize_linear(pt, s, axis=axis,
                                                               block_size=block))
            assert_same(r0, r1, f"DQ packed shape={shape} axis={axis} block={block}")


@pytest.mark.parametrize("xtn", list(FP_OUT))
def test_float8_dequantize_lengths(isa, xtn):
    rng = np.random.default_rng(13)
    dt = FP_OUT[xtn]
    for n in LENGTHS:
        codes = rng.integers(0, 256, n).astype(np.uint8)
        x = view_at(rng, (codes & 15 if xtn == "float4e2m1" else codes).view(dt))
        s = scale_value(rng, adversarial_ok=n % 5 == 0)
        for odt in (np.float32, np.float16, ml_dtypes.bfloat16):
            r0, r1 = both(isa, lambda: qsimd.dequantize_linear(x, s, output_dtype=odt))
            assert_same(r0, r1, f"DQ {xtn} n={n} -> {np.dtype(odt).name}")
