"""AMD Quark's ExtendedQuantizeLinear / ExtendedDequantizeLinear (domain ``com.amd.quark``).

Quark extends ONNX QuantizeLinear / DequantizeLinear with int32, uint32, float16 and bfloat16
quantized types. qsimd's :func:`qsimd.quantize_linear` and :func:`qsimd.dequantize_linear`
accept them directly (as `output_dtype` or as the zero point's dtype); this module only gives
them Quark's names and argument names, and refuses types outside Quark's list, for code moving
over from Quark's custom-op library.

Numerics (docs/CONTRACT.md):

- int32 / uint32 outputs: ``saturate(round_half_even(x / scale) + zero_point)`` as for the ONNX
  integer types, clamped in double (so 2**31 never wraps), the zero point exact.
- float16 / bfloat16 outputs: ``to_type(x / scale + zero_point)``, NOT rounded to an integer.
  The quotient has the precision of the integer path; the zero point is added in float32 (as
  Quark's CPU kernel does; an absent one is +0, so x = -0 gives +0) and the sum is rounded to
  nearest even (overflow gives inf).
- dequantize int32 / uint32: ``(x - zero_point) * scale`` with an exact int64 difference;
  float16 / bfloat16: ``(float32(x) - float32(zero_point)) * scale``, all in float32.

API decisions where Quark's op and qsimd differ:

- Inputs: Quark's schema takes float32 x and float32 scales only. These functions accept
  everything :func:`qsimd.quantize_linear` / :func:`qsimd.dequantize_linear` accept (float16,
  bfloat16 or int32 x; float16 / bfloat16 scales), with the same numerics as there;
  with float32 x and scales the results are Quark's. Dequantize returns the scale's type as
  ONNX DequantizeLinear does (float16 for a float16 scale), not always float32: pass float32
  scales for Quark's output type.
- ``axis`` defaults to 1, ONNX's default and the default Quark's op declares. Quark's kernel
  uses axis 0 when a node has no ``axis`` attribute: when translating such a node with
  per-channel parameters, pass ``axis=0``.
"""
from __future__ import annotations

import operator

import numpy as np

from . import _args, _arrays, _core
from ._api import dequantize_linear, quantize_linear
from ._dtypes import CODE_TO_DTYPE, DTYPE_TO_CODE, name_of, resolve

#: The quantized types of ExtendedQuantizeLinear / ExtendedDequantizeLinear (T3 / T1).
QUARK_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16")
_QUARK_CODES = tuple(resolve(t, "type") for t in QUARK_TYPES)
# their native-order dtypes: an array or NumPy scalar of one passes the checks at a dict lookup
_QUARK_DTYPES = {dt: code for dt, code in DTYPE_TO_CODE.items() if code in _QUARK_CODES}


def _check(code: int, argname: str) -> None:
    if code not in _QUARK_CODES:
        raise TypeError(f"{argname}: {name_of(code)} is not one of Quark's types "
                        f"({', '.join(QUARK_TYPES)}); use qsimd.quantize_linear / "
                        f"dequantize_linear for the other ONNX types")


def _array_code(value):
    if isinstance(value, np.ndarray):
        return DTYPE_TO_CODE.get(value.dtype.newbyteorder("="))
    a = np.asarray(value)
    return DTYPE_TO_CODE.get(a.dtype) if a.dtype.kind != "O" else None


def extended_quantize_linear(x, y_scale, y_zero_point=None, *, axis=1, output_dtype=None,
                             out=None, num_threads=None):
    """ExtendedQuantizeLinear: the zero point's dtype (or `output_dtype`) selects the output
    type among :data:`QUARK_TYPES`; uint8 with zero point 0 when neither is given."""
    y_zero_point, = _arrays.arrays((y_zero_point, "y_zero_point"))
    if output_dtype is not None:
        _check(resolve(output_dtype, "output_dtype"), "output_dtype")
    elif isinstance(y_zero_point, (np.ndarray, np.generic)) and \
            y_zero_point.dtype in _QUARK_DTYPES:
        pass
    elif y_zero_point is not None:
        code = _array_code(y_zero_point)
        if code is not None:
            _check(code, "y_zero_point")
    return quantize_linear(x, y_scale, y_zero_point, axis=axis, output_dtype=output_dtype,
                           out=out, num_threads=num_threads)


def extended_dequantize_linear(x, x_scale, x_zero_point=None, *, axis=1, out=None,
                               num_threads=None):
    """ExtendedDequantizeLinear: x of one of :data:`QUARK_TYPES`; the result has the scale's
    type (float32 in Quark)."""
    if not (type(x) is np.ndarray and x.dtype in _QUARK_DTYPES):
        x, x_zero_point = _arrays.arrays((x, "x"), (x_zero_point, "x_zero_point"))
        hint = _array_code(x_zero_point) if x_zero_point is not None else None
        _, code = _args.typed_array(x, "x", hint if hint in _QUARK_CODES else 6,
                                    tuple(CODE_TO_DTYPE))
        _check(code, "x")
    return dequantize_linear(x, x_scale, x_zero_point, axis=axis, out=out,
                             num_threads=num_threads)


# ------------------------------------------------------------------ MX and BFP
# The C core (qsimd.h: qsimd_mx_quantize_dequantize, qsimd_bfp_quantize_dequantize,
# qsimd_quantize_mx) checks every attribute and owns the messages; this layer converts x and
# the Python values and allocates the results.

#: MXQuantizeDequantize element types: (largest exponent emax, smallest normal exponent,
#: mantissa bits, largest magnitude); int8 has an implicit 2^-6 and emax 0.
MX_ELEMENT_TYPES = {
    "fp8_e5m2": (15, -14, 2, 57344.0),
    "fp8_e4m3": (8, -6, 3, 448.0),
    "fp6_e3m2": (4, -2, 2, 28.0),
    "fp6_e2m3": (2, 0, 3, 7.5),
    "fp4_e2m1": (2, 0, 1, 6.0),
    "int8": (0, 0, 0, 127.0),
}

_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)


def _name(value) -> str:
    """A name attribute for C: a str (lone surrogates escaped: C takes UTF-8); anything else
    (or a str holding NUL) as its repr, which no name matches, so that C reports it."""
    if not isinstance(value, str) or "\0" in value:
        value = repr(value).replace("\0", "\\0")
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _int(value, name) -> int:
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None
    if not -2**63 <= v < 2**63:
        raise ValueError(f"{name} {v} is out of range (the attribute is an int64)")
    return v


def _float_x(x):
    """x as a native C-contiguous float32 array, and whether it was float16 (computed in
    float32 and rounded back, as Quark's op casts)."""
    if not isinstance(x, np.ndarray):
        a = _arrays.array_like(x, "x")
        if a is None:   # Python data: floats become float32 (a NumPy float64 is refused)
            a = np.asarray(x)
            if a.dtype == np.float64 and not isinstance(x, np.generic):
                a = a.astype(np.float32)
        x = a
    native = x.dtype.newbyteorder("=") if x.dtype.kind == "f" else x.dtype
    if native == _F16:
        return _args.native(x.astype(np.float32)), True
    if native != _F32:
        raise TypeError(f"x must be float32 or float16 (Quark's input types), got {x.dtype}")
    return _args.native(x), False


_BFP_INTS = ("axis", "bit_width", "block_size", "rounding_mode", "sub_block_size",
             "sub_block_shift_bits", "convert_to_bfloat_before_bfp")


def _fake_quantize(bfp, x, name, ints, names, out, num_threads):
    """The general path: converts x and the attributes, allocates (or takes out=), then makes
    the C call in float32."""
    name = _name(name)
    ints = tuple(int(_int(v, n)) for v, n in zip(ints, names))   # int(): not a bool
    xin = x
    x, half = _float_x(x)
    threads = _args.threads(num_threads) or None
    # x too: a tensor's ndarray view may overlap out, which the C call does not allow
    y, copy_to = _args.output(out, x.shape, _F16 if half else _F32, [xin, x])
    y32 = _core.new_result(x.shape, _F32) if half else y
    # in final form now: the fast path makes the C call
    if _core.fake_quantize_fast(bfp, x, name, ints, y32, threads) is None:
        _args.too_many_dims(x.ndim)
    if half:   # rounded to nearest even, as Quark's Cast: beyond float16's range is inf, no warning
        with np.errstate(over="ignore"):
            np.copyto(y, y32, casting="unsafe")
    return _args.finish(y, copy_to)


def mx_quantize_dequantize(x, element_dtype="int8", axis=1, block_size=32, rounding_mode=0, *,
                           out=None, num_threads=None):
    """AMD Quark's MXQuantizeDequantize: OCP microscaling fake quantization along `axis`.

    Each block of `block_size` elements along `axis` (the last one may be short) shares the
    scale 2^(e - 127 - emax), e the largest float32 exponent field in the block (NaN and inf
    not counting; an all-zero block uses e = 0) and emax the element type's largest exponent.
    Elements are x / scale rounded to `element_dtype`, then multiplied by the scale again:

    - float types (fp8_e5m2, fp8_e4m3, fp6_e3m2, fp6_e2m3, fp4_e2m1): rounded half to even to
      the type's precision (subnormals included), saturated at its largest magnitude, a zero
      result is +0; `rounding_mode` does not apply (as in Quark).
    - int8: (x / scale) * 64 rounded by `rounding_mode` (0 half away from zero, 1 half up,
      2 half to even), clamped to [-128, 127], divided by 64.

    NaN and inf are returned unchanged. Inputs of 512K elements or more are split over up to
    `num_threads` threads (default: qsimd.get_num_threads()). float32 in, float32 out (float16
    x: computed in float32 and rounded back, as Quark's op does). `out`: an array of the
    result's shape and dtype to write (x itself: in place). The results equal Quark 0.13's op
    bit for bit, with these deliberate differences: a one-element tensor is quantized (Quark
    returns it unchanged), `axis` is checked on 1-D input too (Quark ignores it there), and
    rounding modes other than 0, 1, 2 are rejected (Quark treats them as 0).
    """
    ints = (axis, block_size, rounding_mode)
    y = _core.fake_quantize_fast(False, x, element_dtype, ints, out, num_threads)
    if y is not None:   # native float32 C-contiguous x, plain arguments
        return y
    return _fake_quantize(False, x, element_dtype, ints, ("axis", "block_size", "rounding_mode"),
                          out, num_threads)


def bfp_quantize_dequantize(x, bfp_method="to_bfp", axis=1, bit_width=16, block_size=8,
                            rounding_mode=0, sub_block_size=2, sub_block_shift_bits=1,
                            convert_to_bfloat_before_bfp=0, *, out=None, num_threads=None):
    """AMD Quark's BFPQuantizeDequantize: block floating point fake quantization along
    `axis`, blocks of `block_size` (the last one may be short), m = bit_width - 9 mantissa
    bits (1 sign and 8 shared exponent bits).

    - ``"to_bfp"``: with e the block's largest float32 exponent (NaN and inf not counting),
      scale = 2^(e - 127 - (m - 1)); each element is round(x / scale) * scale (`rounding_mode`
      0 half away from zero, 1 half up, 2 half to even), clamped to +-(2^(e - 126) - scale).
      NaN and inf are returned unchanged.
    - ``"to_bfp_prime"``: the block's exponent e (NaN / inf included: such a block becomes
      NaN 0x7FFFFFFF throughout); each sub-block of `sub_block_size` elements gets a shift
      d = min(e - its largest exponent, 2^sub_block_shift_bits - 1); mantissas (subnormals
      flushed to zero) are rounded in integers to m bits at exponent e - d, never above
      2^m - 1, with `rounding_mode` settling ties.

    `convert_to_bfloat_before_bfp` first rounds x to bfloat16 precision (half to even).

    float32 in, float32 out (float16 x and `out` as in :func:`mx_quantize_dequantize`); Quark
    0.13's results bit for bit, with these deliberate differences: a one-element tensor is
    quantized (Quark returns it unchanged), `axis` is checked on 1-D input too, the bfloat16
    rounding keeps NaN a NaN and never writes into x (Quark's does both), and arguments Quark
    would read uninitialised memory for are rejected: rounding modes other than 0-2,
    bit_width outside 10-32, a block_size that sub_block_size does not divide (to_bfp_prime).
    """
    ints = (axis, bit_width, block_size, rounding_mode, sub_block_size, sub_block_shift_bits,
            convert_to_bfloat_before_bfp)
    y = _core.fake_quantize_fast(True, x, bfp_method, ints, out, num_threads)
    if y is not None:
        return y
    return _fake_quantize(True, x, bfp_method, ints, _BFP_INTS, out, num_threads)


# ------------------------------------------------------------------ ONNX-native MX

# element type -> ONNX / ml_dtypes name
_MX_ONNX = {
    "fp8_e4m3": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2", "float8_e5m2": "float8_e5m2",
    "fp6_e3m2": "float6_e3m2fn", "float6_e3m2fn": "float6_e3m2fn",
    "fp6_e2m3": "float6_e2m3fn", "float6_e2m3fn": "float6_e2m3fn",
    "fp4_e2m1": "float4_e2m1fn", "float4_e2m1fn": "float4_e2m1fn",
    "int8": "int8",
}


def quantize_mx(x, element_dtype, *, axis=-1, block_size=32, out=None, num_threads=None):
    """OCP microscaling (MX) quantization in ONNX's terms: returns ``(elements, scales)``.

    `scales` (ml_dtypes float8_e8m0fnu, x's shape with ceil(d / block_size) along `axis`)
    holds each block's power of two, 2^(e - 127 - emax) for e the largest float32 exponent
    field in the block (NaN and inf not counting) and emax the element type's largest
    exponent (int8: 2^(e - 133), its elements being 1.6 fixed point); blocks below e8m0's
    range (all elements under 2^(emax - 127), zeros included) get its smallest scale 2^-127.
    `elements` is ``qsimd.quantize_linear(x, scales, axis=axis, block_size=block_size,
    output_dtype=...)``: half to even, saturating, -0 kept as a float cast keeps it, NaN and
    inf as QuantizeLinear converts them (float8_e4m3fn: NaN; e5m2: inf saturates; float4 and
    int8 have no NaN). ``qsimd.dequantize_linear(elements, scales, axis=axis,
    block_size=block_size, output_dtype="float32")`` and ONNX's DequantizeLinear (opset 24+,
    output_dtype FLOAT: an e8m0 scale alone would make the result e8m0) then give what
    :func:`mx_quantize_dequantize` gives with rounding_mode=2 for finite blocks whose largest
    magnitude is 0 or at least 2^(emax - 127), up to the sign of zero.

    element_dtype: fp8_e4m3 / float8_e4m3fn, fp8_e5m2 / float8_e5m2, fp4_e2m1 /
    float4_e2m1fn, fp6_e3m2 / float6_e3m2fn, fp6_e2m3 / float6_e2m3fn, int8.
    `out`: an array for the elements, as quantize_linear's `out`.
    """
    import ml_dtypes
    name = _MX_ONNX.get(element_dtype) if isinstance(element_dtype, str) else None
    if name is None:
        raise ValueError(f"element_dtype must be one of {', '.join(_MX_ONNX)}, "
                         f"got {element_dtype!r}")
    try:
        code = resolve(name, "element_dtype")
    except (TypeError, ValueError):
        raise ValueError(f"element_dtype {element_dtype!r}: this build of qsimd has no "
                         f"{name} type") from None
    xin = x
    if not isinstance(x, np.ndarray):
        a = _arrays.array_like(x, "x")
        x = a if a is not None else np.asarray(x) if isinstance(x, np.generic) else \
            np.asarray(x, np.float32)   # Python data
    if x.dtype.newbyteorder("=") != np.dtype(np.float32):
        raise TypeError(f"x must be float32, got {x.dtype}")
    x = _args.native(x)
    ax, bs = _int(axis, "axis"), _int(block_size, "block_size")
    threads = _args.threads(num_threads)
    nd = x.ndim
    if nd and -nd <= ax < nd and bs >= 1:
        a = ax % nd
        sshape = x.shape[:a] + (-(-x.shape[a] // bs),) + x.shape[a + 1:]
    else:
        sshape = (0,)   # the C call reports the axis or block size before looking at it
    codes = np.empty(sshape, np.uint8)
    elements, copy_to = _args.output(out, x.shape, CODE_TO_DTYPE[code], [xin])
    _core.quantize_mx(x, elements, code, codes, ax, bs, threads)
    return _args.finish(elements, copy_to), codes.view(ml_dtypes.float8_e8m0fnu)


__all__ = ["QUARK_TYPES", "MX_ELEMENT_TYPES", "quantize_mx", "extended_quantize_linear",
           "extended_dequantize_linear", "mx_quantize_dequantize", "bfp_quantize_dequantize"]
