"""Runs of at least 32 MiB (input + output) write their output with non-temporal stores on
x86 (the operator layer sets the kernels' `stream` flag from QS_STREAM_BYTES in
csrc/ops/types.h; csrc/kernels/generic/driver.h honours it for every single-entry run): a
head up to the first cache line of y, a middle streamed from an L1 buffer, and a tail. Each ISA's result must equal the scalar
kernel's, for outputs starting at every kind of offset from a cache line and lengths that
leave a tail; the scalar kernel itself is checked against onnx.reference elsewhere (and on a
slice here)."""
import ml_dtypes
import numpy as np
import pytest

import qsimd
from qtest_util import QUICK, assert_same, ref_dequantize, ref_quantize

pytestmark = pytest.mark.skipif(QUICK, reason="64 MB cases; the emulated run has no NT path")

N = (9 << 20) + 37   # 36 MiB of float32: past the threshold with any output


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(23)
    x = (rng.standard_normal(N + 64) * 60).astype(np.float32)
    x[::101] = np.rint(x[::101]) + 0.5    # ties
    x[::997] = np.nan
    return x


def _offset_out(dtype, n, byte_offset):
    """An array of n elements whose data starts byte_offset bytes past a 64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(n * itemsize + 128 + byte_offset, np.uint8)
    start = (-raw.ctypes.data) % 64 + byte_offset
    return raw[start:start + n * itemsize].view(dtype)


def _scalar(fn):
    previous = qsimd.get_isa()
    qsimd.set_isa("scalar")
    try:
        return fn()
    finally:
        qsimd.set_isa(None if previous == qsimd.available_isas()[-1] else previous)


@pytest.mark.parametrize("out,packed,offsets", [
    ("uint8", False, (0, 1, 63)), ("int16", False, (0, 2, 62)), ("int4", True, (0, 5)),
    ("uint2", True, (0, 7)), ("float8_e4m3fn", False, (0, 9)),
    ("float6_e2m3fn", True, (0, 8, 16, 3)), ("float6_e3m2fn", True, (0, 48, 40)),
])
def test_quantize_streamed(isa, data, out, packed, offsets):
    dt = np.dtype(getattr(ml_dtypes, out, None) or out)
    for xoff in (0, 3):
        x = data[xoff:xoff + N]
        zp = None if out.startswith("float") else np.zeros((), dt) + dt.type(1)
        kw = dict(packed=packed, output_dtype=dt)
        want = _scalar(lambda: qsimd.quantize_linear(x, np.float32(0.37), zp, **kw))
        if packed:
            want = want.data
        for off in offsets:
            y = _offset_out(np.uint8 if packed else dt, want.size, off)
            got = qsimd.quantize_linear(x, np.float32(0.37), zp, out=y, **kw)
            got = got.data if packed else got
            assert got is y
            assert_same(got, want, f"{out} x+{xoff} y+{off}")
    if isa == "scalar":   # the expectation itself, on a slice spanning head and middle
        code = {"float8_e4m3fn": 17, "float6_e2m3fn": 27, "float6_e3m2fn": 28}.get(out)
        ref = ref_quantize(x[:4096], np.float32(0.37), zp, output_dtype=code)
        bits = {"int4": 4, "uint2": 2, "float6_e2m3fn": 6, "float6_e3m2fn": 6}.get(out, 8)
        head = qsimd.unpack(want[:4096 * bits // 8], out, (4096,)) if packed else want[:4096]
        assert_same(head, ref, f"{out} vs reference")


@pytest.mark.parametrize("xt,ot,offsets", [
    ("uint8", np.float32, (0, 4, 60)), ("int16", ml_dtypes.bfloat16, (0, 2, 34)),
    ("uint8", np.float16, (0, 2)),
])
def test_dequantize_streamed(isa, data, xt, ot, offsets):
    q = _scalar(lambda: qsimd.quantize_linear(data[:N], np.float32(0.37),
                                              np.zeros((), xt) + np.dtype(xt).type(3)))
    scale = np.array(0.37, ot)
    zp = np.zeros((), xt) + np.dtype(xt).type(3)
    want = _scalar(lambda: qsimd.dequantize_linear(q, scale, zp))
    for off in offsets:
        y = _offset_out(ot, N, off)
        assert_same(qsimd.dequantize_linear(q, scale, zp, out=y), want, f"{xt}->{ot} y+{off}")
    if isa == "scalar":
        assert_same(want[:4096], ref_dequantize(q[:4096], scale, zp), "vs reference")


def test_dequantize_packed_streamed(isa, data):
    codes = _scalar(lambda: qsimd.quantize_linear(data[:N], np.float32(8.0),
                                                  output_dtype="int4", packed=True).data)
    src = qsimd.PackedTensor(codes, "int4", (N,))
    want = _scalar(lambda: qsimd.dequantize_linear(src, np.float32(0.5)))
    for off in (0, 16, 20):   # 20: a head that is not a whole number of bytes: not streamed
        y = _offset_out(np.float32, N, off)
        assert_same(qsimd.dequantize_linear(src, np.float32(0.5), out=y), want, f"y+{off}")


@pytest.mark.parametrize("xt", [np.float16, ml_dtypes.bfloat16])
def test_dequantize_half_streamed(isa, data, xt):
    # AMD Quark's float16 / bfloat16 inputs widen to float32 through the driver's dequantize
    # loop, which streams too; with and without a float zero point, NaN and inf kept
    h = data[:N].astype(xt)
    h[5::4099] = np.inf
    for zp in (None, xt(1.5)):
        want = _scalar(lambda: qsimd.quark.extended_dequantize_linear(h, np.float32(0.37), zp))
        for off in (0, 4, 16, 60):
            y = _offset_out(np.float32, N, off)
            got = qsimd.quark.extended_dequantize_linear(h, np.float32(0.37), zp, out=y)
            assert got is y
            assert_same(got, want, f"{np.dtype(xt).name} zp={zp} y+{off}")
    if isa == "scalar":   # widening is exact, so float32 arithmetic on the widened values
        w = h[:4096].astype(np.float32)
        assert_same(want[:4096], ((w - np.float32(1.5)) * np.float32(0.37)).astype(np.float32),
                    "vs float32 arithmetic")
