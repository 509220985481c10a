"""Arrays of other libraries: PyTorch tensors, bare DLPack producers and buffers as x, scale,
zero_point and out= of every public function. The results are compared with onnx.reference
(and the Quark / dynamic functions with their NumPy-array calls, which their own tests check
against the reference and Quark's ops); memory is checked to be shared, not copied, through
data pointers; out= tensors are filled in place; what cannot be read or written is a
TypeError / ValueError naming the argument."""
import array
import gc
import os
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import qsimd
from qtest_util import assert_same, onnx_code, ref_dequantize, ref_quantize

try:
    import torch
except ImportError:
    torch = None
if os.environ.get("QSIMD_TEST_NO_TORCH"):   # the sanitized run keeps torch out of its process
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (or left out "
                                                       "by QSIMD_TEST_NO_TORCH)")

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(7)


def _x(shape=(6, 40)):
    """Values where the reference is defined (NaN and inf: docs/CONTRACT.md, other tests)."""
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    x.reshape(-1)[:6] = [0.5, 1.5, -2.5, 2.5e-2, -0.0, 300]   # ties, -0, saturation
    return x


def _t(a):
    """A torch tensor over a copy of a (bfloat16 through its bits: torch.from_numpy has no
    ml_dtypes types)."""
    a = np.ascontiguousarray(a)
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _np(t):
    """A tensor's values as NumPy (bfloat16 as ml_dtypes)."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(BF16)
    return t.numpy()


class DLPackOnly:
    """An object with nothing but the DLPack protocol (the device method is optional) over a
    tensor or a NumPy array."""

    def __init__(self, t, device=True):
        self._t = t
        if device:
            self.__dlpack_device__ = t.__dlpack_device__

    def __dlpack__(self, **kw):
        return self._t.__dlpack__(**kw)


LAYOUTS = {
    "contiguous": lambda t: t,
    "strided": lambda t: t[:, ::3],
    "transposed": lambda t: t.T,
    "offset": lambda t: t[1:, 5:],
}


@needs_torch
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("xt", [np.float32, np.float16, BF16])
def test_torch_x_equals_reference(isa, xt, layout):
    x = _x().astype(xt)
    t = LAYOUTS[layout](_t(x))
    xv = np.ascontiguousarray(LAYOUTS[layout](x))
    for scale, zp, out in [(np.array(0.05, xt), np.array(128, np.uint8), None),
                           (np.array(0.25, np.float32), np.array(-3, np.int8), None),
                           (np.array(0.5, np.float32), None, "int16")]:
        want = ref_quantize(xv, scale, zp, output_dtype=onnx_code(out) if out else None)
        got = qsimd.quantize_linear(t, scale, zp, output_dtype=out)
        assert isinstance(got, np.ndarray)
        assert_same(got, want, f"{layout} {xt}")


@needs_torch
def test_torch_scale_and_zero_point(isa):
    x = _x()
    s = (RNG.random(40) + 0.05).astype(np.float32)
    z = RNG.integers(-20, 20, 40).astype(np.int8)
    want = ref_quantize(x, s, z, axis=1)
    assert_same(qsimd.quantize_linear(_t(x), _t(s), _t(z), axis=1), want, "per-axis")
    assert_same(qsimd.Quantizer(_t(s), _t(z), axis=1)(_t(x)), want, "Quantizer")
    q = want
    sd = _t(s)
    assert_same(qsimd.dequantize_linear(_t(q), sd, _t(z), axis=1),
                ref_dequantize(q, s, z, axis=1), "dequantize")
    assert_same(qsimd.Dequantizer(sd, _t(z), axis=1)(_t(q)),
                ref_dequantize(q, s, z, axis=1), "Dequantizer")
    # 0-d tensors as per-tensor parameters, bfloat16 scale -> bfloat16 result
    sb = np.array(0.5, BF16)
    u = RNG.integers(0, 256, (3, 5)).astype(np.uint8)
    got = qsimd.dequantize_linear(_t(u), _t(sb), torch.tensor(7, dtype=torch.uint8))
    assert got.dtype == BF16
    assert_same(got, ref_dequantize(u, sb, np.array(7, np.uint8)), "bf16 scale")


@needs_torch
@pytest.mark.parametrize("otn", ["uint8", "int8", "int16"])
def test_out_torch_filled_in_place(isa, otn):
    tdt = getattr(torch, otn)
    x = _x()
    want = ref_quantize(x, np.array(0.1, np.float32), None,
                        output_dtype={"uint8": 2, "int8": 3, "int16": 5}[otn])
    for make in (lambda: torch.empty(6, 40, dtype=tdt),
                 lambda: torch.empty(40, 6, dtype=tdt).T):   # strided: through a temporary
        out = make()
        ptr = out.data_ptr()
        got = qsimd.quantize_linear(_t(x), 0.1, output_dtype=otn, out=out)
        assert got is out and out.data_ptr() == ptr
        assert_same(out.numpy(), want, otn)
        out2 = make()
        assert qsimd.Quantizer(0.1, output_dtype=otn)(_t(x), out=out2) is out2
        assert_same(out2.numpy(), want, otn + " Quantizer")
    # float32 out of dequantize, and of the prepared dequantizer
    q = want
    dw = ref_dequantize(q, np.array(0.1, np.float32))
    outf = torch.empty(6, 40)
    assert qsimd.dequantize_linear(_t(q), np.float32(0.1), out=outf) is outf
    assert_same(outf.numpy(), dw, "dequantize out=")
    outf2 = torch.empty(6, 40)
    assert qsimd.Dequantizer(np.float32(0.1))(_t(q), out=outf2) is outf2
    assert_same(outf2.numpy(), dw, "Dequantizer out=")


def test_dlpack_only_objects_and_buffers(isa):
    """Objects with nothing but the DLPack protocol (NumPy's exporter behind them: no torch,
    so this runs in the sanitized build too) and buffers, contiguous and strided, in and
    out."""
    x = _x()
    want = ref_quantize(x, np.array(0.05, np.float32), np.array(3, np.uint8))
    for wrap in (DLPackOnly(x.copy()), DLPackOnly(x.copy(), device=False)):
        assert_same(qsimd.quantize_linear(wrap, np.float32(0.05), np.uint8(3)), want, "dlpack")
    wide = np.zeros((6, 80), np.float32)
    wide[:, ::2] = x
    assert_same(qsimd.quantize_linear(DLPackOnly(wide[:, ::2]), np.float32(0.05), np.uint8(3)),
                want, "strided dlpack")
    for o in (np.zeros((6, 40), np.uint8), np.zeros((40, 6), np.uint8).T):
        out = DLPackOnly(o)
        assert qsimd.quantize_linear(x, np.float32(0.05), np.uint8(3), out=out) is out
        assert_same(np.ascontiguousarray(o), want, "dlpack out")
    # buffers: array.array of floats in, a bytearray as out (shape from a memoryview cast)
    xa = array.array("f", x.reshape(-1).tolist())
    assert_same(qsimd.quantize_linear(xa, np.float32(0.05), np.uint8(3)), want.reshape(-1),
                "array.array")
    buf = bytearray(240)
    got = qsimd.quantize_linear(x, np.float32(0.05), np.uint8(3),
                                out=memoryview(buf).cast("B", (6, 40)))
    assert bytes(buf) == want.tobytes() and isinstance(got, memoryview)
    # NumPy's own __dlpack__ (a read-only array exports a read-only tensor)
    ro = x.copy()
    ro.flags.writeable = False
    try:
        ro.__dlpack__(max_version=(1, 0))
    except (TypeError, BufferError):   # NumPy before 2.0 exports no read-only arrays
        return
    assert_same(qsimd.quantize_linear(DLPackOnly(ro, device=False), np.float32(0.05),
                                      np.uint8(3)), want, "numpy dlpack")


@needs_torch
def test_float8_and_e8m0_tensors(isa):
    codes = np.arange(256, dtype=np.uint8)
    for tdt, mdt in [(torch.float8_e4m3fn, ml_dtypes.float8_e4m3fn),
                     (torch.float8_e5m2, ml_dtypes.float8_e5m2),
                     (torch.float8_e4m3fnuz, ml_dtypes.float8_e4m3fnuz),
                     (torch.float8_e5m2fnuz, ml_dtypes.float8_e5m2fnuz)]:
        t = torch.from_numpy(codes.copy()).view(tdt)
        s = np.array(0.5, np.float32)
        assert_same(qsimd.dequantize_linear(t, s), ref_dequantize(codes.view(mdt), s), str(tdt))
        out = torch.empty(256, dtype=torch.uint8).view(tdt)
        x = ref_dequantize(codes.view(mdt), s)
        qsimd.quantize_linear(x, s, output_dtype=mdt, out=out)
        assert_same(out.view(torch.uint8).numpy().view(mdt),
                    ref_quantize(x, s, None, output_dtype=onnx_code(mdt)), f"{tdt} out")
    e8 = torch.tensor([2.0**-4], dtype=torch.float8_e8m0fnu).reshape(())
    x = _x()
    assert_same(qsimd.quantize_linear(_t(x), e8, output_dtype="float8e4m3fn"),
                ref_quantize(x, np.array(2.0**-4, ml_dtypes.float8_e8m0fnu), None,
                             output_dtype=17), "e8m0 scale")


@needs_torch
def test_no_copy_of_a_large_tensor():
    """32 MB in: the result (8 MB) is the only allocation; contiguous tensors are read where
    they are, strided ones in bounded pieces; zero-copy views share the tensor's memory."""
    n = 8 * 1024 * 1024
    t = torch.randn(n)
    from qsimd import _arrays
    v = _arrays.array_like(t, "x")
    assert v.ctypes.data == t.data_ptr() and np.shares_memory(v, t.numpy())
    vs = _arrays.array_like(t.view(2048, -1)[:, ::2], "x")
    assert vs.ctypes.data == t.data_ptr() and vs.strides == (4 * n // 2048, 8)
    out = torch.empty(n, dtype=torch.uint8)
    ptr = out.data_ptr()
    for x, o in [(t, None), (t, out), (t.view(2048, -1)[:, ::2], None)]:
        gc.collect()
        tracemalloc.start()
        try:
            y = qsimd.quantize_linear(x, 0.05, out=o)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 12 * 2**20, peak   # the result at most, never a 32 MB copy
        assert (y is o) if o is not None else isinstance(y, np.ndarray)
    assert out.data_ptr() == ptr
    assert_same(out.numpy(), qsimd.quantize_linear(t.numpy(), 0.05), "32 MB out=")


@needs_torch
def test_float64_is_refused_everywhere():
    x = _x()
    cases = [
        lambda: qsimd.quantize_linear(_t(x).double(), 0.05),
        lambda: qsimd.quantize_linear(x, np.float64(0.05)),
        lambda: qsimd.quantize_linear(x, torch.tensor(0.05, dtype=torch.float64)),
        lambda: qsimd.dequantize_linear(np.zeros(3, np.uint8), np.float64(0.5)),
        lambda: qsimd.dynamic_quantize_linear(_t(x).double()),
        lambda: qsimd.dynamic_quantize(_t(x).double()),
        lambda: qsimd.Quantizer(np.float64(0.05)),
        lambda: qsimd.Dequantizer(torch.tensor([0.5], dtype=torch.float64)),
        lambda: qsimd.quantize_linear(x, 0.05, np.float64(0), output_dtype="float8e4m3fn"),
        lambda: qsimd.quark.mx_quantize_dequantize(_t(x).double(), "fp8_e4m3"),
        lambda: qsimd.quark.quantize_mx(_t(x).double(), "fp8_e4m3", block_size=8),
        lambda: qsimd.quantize_linear(np.float64(0.5), 0.05),
    ]
    for i, f in enumerate(cases):
        with pytest.raises(TypeError, match="float64"):
            f()
    # Python floats and lists are still converted (documented)
    assert_same(qsimd.quantize_linear([0.5, 1.5], 0.5), np.array([1, 3], np.uint8), "lists")


@needs_torch
def test_devices_views_and_grad():
    x = _x()
    with pytest.raises(ValueError, match="^x .*meta"):
        qsimd.quantize_linear(torch.zeros(3, device="meta"), 0.05)

    class OnCuda(DLPackOnly):
        def __dlpack_device__(self):
            return (2, 0)
    with pytest.raises(ValueError, match="^scale is on CUDA"):
        qsimd.quantize_linear(x, OnCuda(torch.tensor(0.5), device=False))
    with pytest.raises(ValueError, match="^out is on CUDA"):
        qsimd.quantize_linear(x, 0.5, out=OnCuda(torch.zeros(6, 40, dtype=torch.uint8),
                                                 device=False))
    # PyTorch's lazy negation: read by value (the memory holds -x), refused as out=
    n = _t(x)._neg_view()
    assert n.is_neg()
    want = ref_quantize(-x, np.array(0.05, np.float32), np.array(0, np.int8))
    assert_same(qsimd.quantize_linear(n, np.float32(0.05), np.int8(0)), want, "neg x")
    assert_same(qsimd.quantize_linear(n[:1, :1], np.float32(0.05), np.int8(0)), want[:1, :1],
                "neg 1 element")
    with pytest.raises(ValueError, match="^out is a lazily negated"):
        qsimd.quantize_linear(x, 0.05, out=torch.zeros(6, 40, dtype=torch.uint8)._neg_view())
    # a tensor requiring grad is read; one as out= is refused (autograd would not see it)
    g = _t(x).requires_grad_()
    assert_same(qsimd.quantize_linear(g, np.float32(0.05)),
                ref_quantize(x, np.array(0.05, np.float32)), "grad x")
    with pytest.raises(ValueError, match="^out requires grad"):
        qsimd.dequantize_linear(np.zeros((2, 3), np.uint8), np.float32(1),
                                out=torch.zeros(2, 3, requires_grad=True))
    # types NumPy has no name for, packed elements, wrong dtypes
    with pytest.raises(TypeError, match="^x must be"):
        qsimd.quantize_linear(torch.zeros(3, dtype=torch.int64), 0.5)
    with pytest.raises(TypeError, match="^x: packed DLPack"):
        qsimd.dequantize_linear(torch.zeros(3, dtype=torch.uint8).view(torch.float4_e2m1fn_x2),
                                0.5)
    with pytest.raises(ValueError, match="^out must have dtype"):
        qsimd.quantize_linear(x, 0.5, out=torch.zeros(6, 40, dtype=torch.int8))
    with pytest.raises(TypeError, match="^x must be"):
        qsimd.quantize_linear(torch.zeros(3, dtype=torch.complex64), 0.5)


@needs_torch
def test_every_public_function_takes_tensors(isa):
    x = _x((8, 32))
    tx = _t(x)
    # dynamic quantization
    for a, b in zip(qsimd.dynamic_quantize_linear(tx), qsimd.dynamic_quantize_linear(x)):
        assert_same(a, b, "dynamic_quantize_linear")
    for a, b in zip(qsimd.dynamic_quantize(tx, block_size=8, output_dtype="int8"),
                    qsimd.dynamic_quantize(x, block_size=8, output_dtype="int8")):
        assert_same(a, b, "dynamic_quantize")
    o = torch.empty(8, 32, dtype=torch.uint8)
    assert qsimd.dynamic_quantize_linear(tx, out=o)[0] is o
    assert_same(o.numpy(), qsimd.dynamic_quantize_linear(x)[0], "dynamic out=")
    # Quark
    from qsimd import quark
    assert_same(quark.mx_quantize_dequantize(tx, "fp8_e4m3", axis=1, block_size=8),
                quark.mx_quantize_dequantize(x, "fp8_e4m3", axis=1, block_size=8), "MX")
    assert_same(quark.bfp_quantize_dequantize(tx[:, ::2], "to_bfp", axis=1),
                quark.bfp_quantize_dequantize(x[:, ::2], "to_bfp", axis=1), "BFP strided")
    for a, b in zip(quark.quantize_mx(tx, "fp4_e2m1", block_size=8),
                    quark.quantize_mx(x, "fp4_e2m1", block_size=8)):
        assert_same(a, b, "quantize_mx")
    zq = torch.tensor(5, dtype=torch.uint16)
    assert_same(quark.extended_quantize_linear(tx, torch.tensor(0.01), zq),
                ref_quantize(x, np.array(0.01, np.float32), np.array(5, np.uint16)), "Extended Q")
    q16 = RNG.integers(0, 65536, (4, 4)).astype(np.uint16)
    assert_same(quark.extended_dequantize_linear(_t(q16), torch.tensor(0.01), zq),
                ref_dequantize(q16, np.array(0.01, np.float32), np.array(5, np.uint16)),
                "Extended DQ")
    # packed sub-byte data: PackedTensor bytes and pack / unpack
    p = qsimd.quantize_linear(x, 0.5, output_dtype="int4", packed=True)
    pt = qsimd.PackedTensor(_t(p.data), p.dtype, p.shape)
    assert_same(qsimd.dequantize_linear(pt, 0.5), qsimd.dequantize_linear(p, 0.5), "packed")
    assert_same(qsimd.unpack(_t(p.data), "int4", p.shape), qsimd.unpack(*p), "unpack")
    outp = torch.empty(p.data.size, dtype=torch.uint8)
    r = qsimd.quantize_linear(tx, 0.5, output_dtype="int4", packed=True, out=outp)
    assert r.data is outp and r.shape == (8, 32) and type(r.shape) is tuple
    assert_same(outp.numpy(), p.data, "packed out=")


@needs_torch
def test_dequantize_torch_u8_strided_equals_reference(isa):
    q = RNG.integers(0, 256, (64, 70)).astype(np.uint8)
    t = _t(q)[:, 3::2]
    want = ref_dequantize(np.ascontiguousarray(q[:, 3::2]), np.array(0.25, np.float16),
                          np.array(9, np.uint8))
    assert_same(qsimd.dequantize_linear(t, np.float16(0.25), torch.tensor(9, dtype=torch.uint8)),
                want, "strided u8")
