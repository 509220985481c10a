"""The public Python API: argument normalisation, validation, output allocation and `out=`.

No element loops live here: every element is touched by the C core (or, for pack/unpack,
by whole-array NumPy operations).
"""
from __future__ import annotations

import math
import operator
import os
import sys

import numpy as np

from . import _args, _arrays, _core, _pieces
from ._dtypes import (
    CODE_TO_DTYPE,
    DQ_INPUT_CODES,
    DQ_OUTPUT_CODES,
    DQ_SCALE_CODES,
    DTYPE_TO_CODE,
    PackedTensor,
    Q_INPUT_CODES,
    Q_OUTPUT_CODES,
    Q_SCALE_CODES,
    SUBBYTE_BITS,
    name_of,
    resolve,
)

_F32 = np.dtype(np.float32)


def _q_output(code):
    if code not in Q_OUTPUT_CODES:
        raise TypeError(f"output type {name_of(code)} is not supported by quantize_linear "
                        f"(supported: {_args.names(Q_OUTPUT_CODES)})")
    return code


def _q_params(scale, zero_point, axis, block_size, output_dtype, saturate, precision, packed,
              limit):
    """QuantizeLinear's parameters and attributes, validated and converted (shared by
    quantize_linear and Quantizer)."""
    scale, st = _args.float_input(scale, "scale", Q_SCALE_CODES, False, limit)
    zero_point, = _arrays.arrays((zero_point, "zero_point"))
    ot = None
    if output_dtype is not None and not _args.is_zero_code(output_dtype):   # ONNX 0: unset
        ot = _q_output(resolve(output_dtype, "output_dtype"))   # before a Python zero point
    zt = None
    if zero_point is not None:
        if ot is None and isinstance(zero_point, np.ndarray):
            # its type decides the output type: refused before its size is (a prepared
            # operator, which knows no x yet, sees the same TypeError)
            code = DTYPE_TO_CODE.get(zero_point.dtype.newbyteorder("="))
            if code is not None:
                _q_output(code)
        zero_point, zt = _args.typed_array(zero_point, "zero_point", ot or 2,
                                      tuple(CODE_TO_DTYPE) if isinstance(zero_point, np.ndarray)
                                      else Q_OUTPUT_CODES, limit)   # C: of type ot, if given
    yt = ot or _q_output(zt or 2)
    sat = 1 if _args.flag(saturate, "saturate") else 0
    prec = 0   # C checks that it is a float type
    if precision is not None and not _args.is_zero_code(precision):
        prec = resolve(precision, "precision")
    axis = _args.attr64(axis, "axis")
    block_size = _args.attr64(block_size, "block_size")
    packed = _args.flag(packed, "packed")
    if packed and yt not in SUBBYTE_BITS:
        raise ValueError(f"packed=True needs a 6-, 4- or 2-bit output type, not {name_of(yt)}")
    return scale, st, zero_point, zt, yt, sat, prec, axis, block_size, packed


def quantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                    saturate=True, precision=None, packed=False, out=None, num_threads=None):
    """ONNX QuantizeLinear: ``y = saturate(round_half_even(x / scale) + zero_point)``.

    x: float32, float16, bfloat16 or int32; scale per-tensor, per-axis (1-D along `axis`) or
    blocked (``ceil(D / block_size)`` entries along `axis`); the output type is
    `output_dtype`, else the zero point's, else uint8. ``packed=True`` returns a PackedTensor
    of a 6-, 4- or 2-bit result. `out` may overlap the inputs. What every argument accepts,
    the errors and threads: docs/API.md.
    """
    y = _core.quantize_fast(x, scale, zero_point, axis, block_size, output_dtype, saturate,
                            precision, packed, out, num_threads)
    if y is not None:   # None: some argument needs the work below
        return y
    x, scale, zero_point = _arrays.arrays((x, "x"), (scale, "scale"), (zero_point, "zero_point"))
    if _pieces.wanted(x):   # a large strided / Fortran-order x: in pieces, not copied whole
        pk = packed is True or (type(packed) in (int, np.bool_) and packed == 1)
        bits = _pieces.packed_bits(output_dtype, zero_point) if pk else 0
        r = None if pk and not bits else _pieces.run(
            quantize_linear, x, scale, zero_point, axis, block_size, bits,
            lambda dt: _args.output(out, ((x.size * bits + 7) // 8,) if bits else x.shape, dt,
                               (x, scale, zero_point)),
            output_dtype=output_dtype, saturate=saturate, precision=precision, packed=packed,
            num_threads=num_threads)
        if r is not None:
            y = _args.finish(r[0], r[1])
            return PackedTensor(y, CODE_TO_DTYPE[r[2]], x.shape) if bits else y
    x, xt = _args.float_input(x, "x", Q_INPUT_CODES, True)
    scale, st, zero_point, zt, yt, sat, prec, axis, block_size, packed = _q_params(
        scale, zero_point, axis, block_size, output_dtype, saturate, precision, packed,
        _args.param_limit(x.shape))
    y, user_out = _args.output(out, *_q_result(x.shape, x.size, yt, packed),
                               (x, scale, zero_point))
    # in final form now: the fast path makes the C call (C checks shapes, axis, block size)
    if _core.quantize_fast(x, scale, zero_point, axis, block_size, yt, sat, prec or None,
                           packed, y, _args.threads(num_threads) or None) is None:
        _args.too_many_dims(x.ndim)
    y = _args.finish(y, user_out)
    return PackedTensor(y, CODE_TO_DTYPE[yt], x.shape) if packed else y


def _q_result(shape, size, yt, packed):
    """The shape and dtype of a QuantizeLinear result: x's shape, or the packed bytes."""
    if packed:
        return ((size * SUBBYTE_BITS[yt] + 7) // 8,), np.dtype(np.uint8)
    return shape, CODE_TO_DTYPE[yt]


_core.setup_fast(PackedTensor)


def _packed_input(x: PackedTensor):
    code = resolve(x.dtype, "x.dtype")
    if code not in SUBBYTE_BITS:
        raise TypeError(f"x.dtype must be int4, uint4, int2, uint2, float4_e2m1fn, "
                        f"float6_e2m3fn or float6_e3m2fn, got "
                        f"{name_of(code)}")
    data = x.data
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = np.frombuffer(data, np.uint8)
    else:
        data, = _arrays.arrays((data, "x.data"))
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8:
        raise TypeError("x.data must be a uint8 array or bytes")
    shape = _packed_shape(x.shape, data.size, code, "x.")
    return PackedTensor(_args.native(data.reshape(-1)), code, shape), code, shape


def dequantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                      out=None, num_threads=None):
    """ONNX DequantizeLinear: ``y = (x - zero_point) * scale``, the subtraction exact.

    x: every quantized type, or a PackedTensor of 6-, 4- or 2-bit data; the result has the
    scale's type unless `output_dtype` (float32, float16, bfloat16) is given. Arguments,
    `out`, errors and threads as for quantize_linear (docs/API.md).
    """
    y = _core.dequantize_fast(x, scale, zero_point, axis, block_size, output_dtype, out,
                              num_threads)
    if y is not None:   # None: some argument needs the work below
        return y
    if isinstance(x, PackedTensor):
        x, xt, shape = _packed_input(x)
        data = x.data
    else:
        x, scale, zero_point = _arrays.arrays((x, "x"), (scale, "scale"),
                                              (zero_point, "zero_point"))
        if _pieces.wanted(x):   # a large strided / Fortran-order x: in pieces, not copied
            r = _pieces.run(dequantize_linear, x, scale, zero_point, axis, block_size, 0,
                            lambda dt: _args.output(out, x.shape, dt, (x, scale, zero_point)),
                            output_dtype=output_dtype, num_threads=num_threads)
            if r is not None:
                return _args.finish(*r)
        zp_code = None
        if isinstance(zero_point, (np.ndarray, np.generic)):   # Python data x takes its type
            zp_code = DTYPE_TO_CODE.get(zero_point.dtype.newbyteorder("="))
        x, xt = _args.typed_array(x, "x", zp_code if zp_code in DQ_INPUT_CODES else 6,
                                  DQ_INPUT_CODES)
        shape, data = x.shape, x
    limit = _args.param_limit(shape)
    scale, st = _args.float_input(scale, "scale", DQ_SCALE_CODES, False, limit)
    zt = None
    if zero_point is not None:
        zero_point, zt = _args.typed_array(zero_point, "zero_point", xt, tuple(CODE_TO_DTYPE),
                                           limit)   # C checks that it has x's type
    yt = _dq_output(output_dtype) or st
    axis = _args.attr64(axis, "axis")
    block_size = _args.attr64(block_size, "block_size")
    y, user_out = _args.output(out, shape, CODE_TO_DTYPE[yt], (data, scale, zero_point))
    # in final form now: the fast path makes the C call (C checks shapes, axis, block size)
    if _core.dequantize_fast(x, scale, zero_point, axis, block_size, yt, y,
                             _args.threads(num_threads) or None) is None:
        _args.too_many_dims(len(shape))
    return _args.finish(y, user_out)


def dynamic_quantize_linear(x, *, out=None):
    """ONNX DynamicQuantizeLinear (uint8). Returns ``(y, y_scale, y_zero_point)``, the last
    two as 0-d float32 and uint8 arrays. NaN elements are ignored when finding the range.
    out: a uint8 array of x's shape to write y into, as for quantize_linear (it is then the
    returned y)."""
    r = _core.dynamic_quantize_fast(x, out)
    if r is not None:
        return r
    x, = _arrays.arrays((x, "x"))
    if _pieces.wanted(x) and x.dtype.newbyteorder("=") == _F32:
        r = _pieces.dynamic(x, lambda: _args.output(out, x.shape, np.dtype(np.uint8), (x,)),
                            quantize_linear, dynamic_quantize_linear)
        if r is not None:
            return _args.finish(r[0], r[1]), r[2], r[3]
    x, _ = _args.float_input(x, "x", (1,), False)
    y, user_out = _args.output(out, x.shape, np.dtype(np.uint8), (x,))
    r = _core.dynamic_quantize_fast(x, y) or _args.too_many_dims(x.ndim)   # in final form now
    return (_args.finish(y, user_out),) + r[1:]


def dynamic_quantize(x, *, axis=-1, block_size=None, output_dtype="uint8", symmetric=False,
                     out=None, num_threads=None):
    """Dynamic quantization per row (per token) or per block: every group of `block_size`
    consecutive elements along `axis` (None: the whole axis) gets its own scale and zero
    point, DynamicQuantizeLinear's formulas with the output type's range (symmetric=True:
    ``max|g| / qmax``, zero point 0). Returns ``(y, scale, zero_point)``, the parameters
    shaped for dequantize_linear with `block_size`. Details: docs/serving.md.
    """
    r = _core.dynamic_fast(x, axis, block_size, output_dtype, symmetric, out, num_threads)
    if r is not None:
        return r
    x, _ = _args.float_input(x, "x", (1,), False)
    yt = resolve(output_dtype, "output_dtype")   # C checks the type and `symmetric` with it
    sym = _args.flag(symmetric, "symmetric")
    axis = _args.attr64(axis, "axis")
    block = None if block_size is None else _args.attr64(block_size, "block_size")
    if block is not None and block < 1:
        raise ValueError(f"block_size must be >= 1 (or None: the whole axis), got {block}")
    y, user_out = _args.output(out, x.shape, CODE_TO_DTYPE[yt], (x,))
    # in final form now: C checks the output type, rank, axis and emptiness
    r = _core.dynamic_fast(x, axis, block, yt, sym, y, _args.threads(num_threads) or None) \
        or _args.too_many_dims(x.ndim)
    return (_args.finish(y, user_out),) + r[1:]


def _private(a):
    """A read-only copy of a prepared parameter: later changes to the caller's array cannot
    reach a prepared operator, and no `out=` can overlap it."""
    if a is None:
        return None
    a = np.array(a, copy=True, order="C")
    a.flags.writeable = False
    return a


def _param_repr(a) -> str:
    if not isinstance(a, np.ndarray):   # a Dequantizer's Python-data zero point
        return repr(a)
    if a.ndim == 0:
        return f"{a.dtype.name}({str(a[()])})"   # str: the shortest repr of that type
    return f"<{a.dtype.name} array of shape {a.shape}>"


def _slow(self, op, zero_point):
    """A prepared operator's general path: op (the plain function) with its arguments;
    zero_point() gives the zero point (a fresh copy of Python data). An error about x's shape
    names x: a prepared operator's parameters are fixed, so x is the argument at fault."""
    scale, kw = self._args[0], self._args[2]
    name = "Quantizer" if op is quantize_linear else "Dequantizer"

    def slow(x, out):
        # x as the caller gave it: the plain function converts it and reports what is wrong
        # in its own order (a DLPack tensor's type before its size)
        try:
            return op(x, scale, zero_point(), out=out, **kw)
        except ValueError as e:
            msg = str(e)
            if not any(k in msg for k in ("x.shape", "x of rank", "0-d x", "layout of x")):
                raise
            try:   # an array's or Python data's shape
                shape = x.shape if isinstance(x, (np.ndarray, PackedTensor)) else np.shape(x)
                shape = tuple(operator.index(d) for d in shape)
            except Exception:   # noqa: BLE001
                raise e from None
            raise ValueError(f"x of shape {shape} does not fit this {name}'s parameters: "
                             f"{msg}") from None
    return slow


_PRE_OPS = {"add": 1, "sub": 2, "mul": 3, "div": 4}
# x types a chain reads directly (ONNX codes): uint8, int8, uint16, int16, float32, float16,
# bfloat16
_CHAIN_X_CODES = (2, 3, 4, 5, 1, 10, 16)


def _chain_args(pre, pre_axis, perm):
    """Quantizer's pre / pre_axis / perm, validated: (((name, float32 array), ...), kinds,
    pre_axis, perm tuple)."""
    if pre is None:
        pre = ()
    if isinstance(pre, (str, bytes)) or not hasattr(pre, "__iter__"):
        raise TypeError(f"pre must be a list of (operation, constant) pairs, got "
                        f"{type(pre).__name__}")
    ops, kinds = [], []
    for i, item in enumerate(pre):
        if isinstance(item, (str, bytes)) or not hasattr(item, "__len__") or len(item) != 2:
            raise TypeError(f"pre[{i}] must be an (operation, constant) pair, got {item!r}")
        name, const = item
        if not isinstance(name, str):
            raise TypeError(f"pre[{i}]: the operation must be a str, got "
                            f"{type(name).__name__}")
        if name not in _PRE_OPS:
            raise ValueError(f"pre[{i}]: unknown operation {name!r} (expected add, sub, mul "
                             f"or div)")
        if isinstance(const, (bool, np.bool_)):
            raise TypeError(f"pre[{i}]: the constant must be a number or a 1-D array of "
                            f"numbers, got bool")
        c, = _arrays.arrays((const, f"pre[{i}]"))
        c = np.asarray(c)
        if c.dtype.kind not in "iuf":
            raise TypeError(f"pre[{i}]: the constant must be a number or a 1-D array of "
                            f"numbers, got {c.dtype}")
        if c.ndim > 1 or c.size == 0:
            raise ValueError(f"pre[{i}]: the constant must be a number or a non-empty 1-D "
                             f"array, got shape {c.shape}")
        c = np.array(c.astype(np.float32).reshape(-1), copy=True)
        c.flags.writeable = False
        ops.append((name, c if np.ndim(const) else float(c[0])))
        kinds.append(_PRE_OPS[name])
    pre_axis = _args.attr64(pre_axis, "pre_axis")
    if perm is None:
        perm_t = ()
    else:
        if isinstance(perm, (str, bytes)) or not hasattr(perm, "__iter__"):
            raise TypeError(f"perm must be a sequence of axes, got {type(perm).__name__}")
        try:
            perm_t = tuple(operator.index(p) for p in perm)
        except TypeError:
            raise TypeError(f"perm must hold integers, got {perm!r}") from None
        perm_t = tuple(p + len(perm_t) if p < 0 else p for p in perm_t)   # C checks the rest
    return tuple(ops), kinds, pre_axis, perm_t


def _chain_call(q, x, out, yt, packed, perm):
    """The general path of a Quantizer with a chain."""
    x, _ = _args.float_input(x, "x", _CHAIN_X_CODES, False)   # C-contiguous
    if perm and len(perm) != x.ndim:
        raise ValueError(f"perm has {len(perm)} entries but x has rank {x.ndim}")
    yshape = tuple(x.shape[p] for p in perm) if perm else x.shape
    y, user_out = _args.output(out, *_q_result(yshape, x.size, yt, packed), (x,))
    if q._run_chain(x, y) is None:   # in final form now: C checks x's type and the rest
        _args.too_many_dims(x.ndim)
    y = _args.finish(y, user_out)
    return PackedTensor(y, CODE_TO_DTYPE[yt], yshape) if packed else y


def _init_quantizer(self, scale, zero_point, axis, block_size, output_dtype, saturate,
                    precision, packed, num_threads, pre=None, pre_axis=-1, perm=None):
    """Quantizer.__init__ (qsimd._core): validate and convert once."""
    scale, st, zp, zt, yt, sat, prec, axis, block_size, packed = _q_params(
        scale, zero_point, axis, block_size, output_dtype, saturate, precision, packed, None)
    threads = _args.threads(num_threads)
    scale, zp = _private(scale), _private(zp)   # C checks them (without x) in _setup
    # the prepared arguments: the properties, repr and pickling read them
    self._args = (scale, zp, dict(axis=axis, block_size=block_size, output_dtype=yt,
                                  saturate=bool(sat), precision=prec or None, packed=packed,
                                  num_threads=num_threads))
    slow, chain = _slow(self, quantize_linear, lambda: zp), None
    if pre is not None or perm is not None:
        ops, kinds, pre_axis, perm_t = _chain_args(pre, pre_axis, perm)
        chain = (kinds, [np.atleast_1d(np.asarray(c, np.float32)) for _, c in ops], pre_axis,
                 perm_t)
        self._args[2].update(pre=list(ops), pre_axis=pre_axis,
                             perm=perm_t if perm is not None else None)

        def slow(x, out):
            return _chain_call(self, x, out, yt, packed, perm_t)
    self._setup(True, scale, st, zp, zt or 0, yt, axis, block_size, sat, prec, packed, threads,
                slow, chain)


def _init_dequantizer(self, scale, zero_point, axis, block_size, output_dtype, num_threads):
    """Dequantizer.__init__ (qsimd._core)."""
    scale, st = _args.float_input(scale, "scale", DQ_SCALE_CODES, False)
    zt = None
    zero_point, = _arrays.arrays((zero_point, "zero_point"))
    # Python data (numbers, lists): dequantize_linear gives it x's type, so every call takes
    # that function's path (zt -1), with a private copy of the numbers
    data = zero_point is not None and not isinstance(zero_point, np.ndarray) and (
        DTYPE_TO_CODE.get(np.asarray(zero_point).dtype) is None
        or not isinstance(zero_point, np.generic))
    if data:
        a = np.array(zero_point)
        if a.dtype.kind not in "iuf" or a.dtype == np.bool_:
            raise TypeError(f"zero_point must hold numbers, got {a.dtype}")
    elif zero_point is not None:
        # any type, as dequantize_linear: one that is not x's fails each call, as it does there
        zero_point, zt = _args.typed_array(zero_point, "zero_point", 2, tuple(CODE_TO_DTYPE))
    ot = _dq_output(output_dtype)
    axis = _args.attr64(axis, "axis")
    block_size = _args.attr64(block_size, "block_size")
    threads = _args.threads(num_threads)
    scale = _private(scale)
    zp = a.tolist() if data else _private(zero_point)
    self._args = (scale, zp, dict(axis=axis, block_size=block_size, output_dtype=ot or st,
                                  num_threads=num_threads))

    self._setup(False, scale, st, None if data else zp, -1 if data else zt or 0, ot or 0, axis,
                block_size, 1, 0, False, threads,
                _slow(self, dequantize_linear, a.tolist if data else lambda: zp))


def _dq_output(output_dtype):
    """DequantizeLinear's output_dtype: a code, or None when unset (the scale's type)."""
    if output_dtype is None or _args.is_zero_code(output_dtype):   # ONNX 0: unset
        return None
    ot = resolve(output_dtype, "output_dtype")
    if ot not in DQ_OUTPUT_CODES:
        raise TypeError(f"output_dtype must be float32, float16, bfloat16 or float8_e8m0fnu, "
                        f"got {name_of(ot)}")
    return ot


# keywords a repr leaves out at these values
_REPR_HIDDEN = {"block_size": 0, "saturate": True, "precision": None, "packed": False,
                "num_threads": None, "perm": None}


def _repr_prepared(self):
    scale, zp, kw = self._args
    parts = [f"scale={_param_repr(scale)}"]
    if zp is not None:
        parts.append(f"zero_point={_param_repr(zp)}")
    arrays = any(not isinstance(c, float) for _, c in kw.get("pre", ()))
    for k, v in kw.items():
        if (k in _REPR_HIDDEN and v == _REPR_HIDDEN[k]) or (k == "axis" and scale.size <= 1) \
                or (k == "pre_axis" and not arrays):
            continue
        if k in ("output_dtype", "precision"):
            v = name_of(v)
        elif k == "pre":
            v = "[" + ", ".join(f"({name!r}, {c if isinstance(c, float) else _param_repr(c)})"
                                for name, c in v) + "]"
        parts.append(f"{k}={v}")
    return f"{type(self).__name__}({', '.join(parts)})"


Quantizer = _core.Quantizer
Dequantizer = _core.Dequantizer


def _rebuild(cls, args, kwargs):
    return cls(*args, **kwargs)


def pack(a) -> np.ndarray:
    """ml_dtypes int4 / uint4 / int2 / uint2 / float4_e2m1fn / float6_e2m3fn / float6_e3m2fn
    array -> ONNX raw bytes (uint8, 1-D): element 0 in the lowest bits, zero padding; 6-bit
    codes go 4 to 3 bytes (ceil(n * 6 / 8) bytes in all)."""
    a, = _arrays.arrays((a, "a"))
    if not isinstance(a, np.ndarray):
        raise TypeError(f"a must be a numpy array with a 6-, 4- or 2-bit dtype, got "
                        f"{type(a).__name__}")
    code = DTYPE_TO_CODE.get(a.dtype)
    if code not in SUBBYTE_BITS:
        raise TypeError(f"a must have a 6-, 4- or 2-bit dtype (int4, uint4, int2, uint2, "
                        f"float4_e2m1fn, float6_e2m3fn, float6_e3m2fn), got {a.dtype}")
    codes = np.ascontiguousarray(a).reshape(-1, 1).view(np.uint8)
    # the codes' low bits as one little-endian bit stream: every width alike
    bits = np.unpackbits(codes, axis=1, count=SUBBYTE_BITS[code], bitorder="little")
    return np.packbits(bits.reshape(-1), bitorder="little")


def _packed_shape(shape, nbytes, code, prefix):
    """A packed tensor's logical shape, checked against its byte count (prefix: "x." for a
    PackedTensor's fields)."""
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{prefix}shape must be a tuple of integers, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{prefix}shape must not have negative dimensions, got {shape}")
    need = (math.prod(shape) * SUBBYTE_BITS[code] + 7) // 8
    if nbytes != need:
        raise ValueError(f"{prefix}data has {nbytes} bytes but shape {shape} of "
                         f"{name_of(code)} needs {need}")
    return shape


def unpack(data, dtype, shape) -> np.ndarray:
    """ONNX raw bytes -> ml_dtypes array of `dtype` (int4, uint4, int2, uint2,
    float4_e2m1fn, float6_e2m3fn, float6_e3m2fn) and `shape`. `data` must hold exactly
    ceil(n * bits / 8) bytes."""
    code = resolve(dtype, "dtype")
    if code not in SUBBYTE_BITS:
        raise TypeError(f"dtype must be a 6-, 4- or 2-bit type, got {name_of(code)}")
    if isinstance(data, (bytes, bytearray, memoryview)):
        b = np.frombuffer(data, dtype=np.uint8)
    else:
        b, = _arrays.arrays((data, "data"))
        b = np.asarray(b)
        if b.dtype not in (np.uint8, np.int8):
            raise TypeError(f"data must be bytes or a uint8 array, got {b.dtype}")
        b = b.reshape(-1).view(np.uint8)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    shape = _packed_shape(shape, b.size, code, "")
    bits, n = SUBBYTE_BITS[code], math.prod(shape)
    stream = np.unpackbits(b, count=n * bits, bitorder="little").reshape(n, bits)
    codes = np.packbits(stream, axis=1, bitorder="little").reshape(-1)
    return codes.view(CODE_TO_DTYPE[code]).reshape(shape)


def get_include() -> str:
    """Directory holding qsimd.h, the C API (like numpy.get_include())."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def get_library_dir() -> str:
    """Directory holding the static C library (libqsimd.a; qsimd.lib on Windows). Link with
    -lqsimd (and -lm on Unix)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def set_num_threads(n: int) -> None:
    """Process-wide default number of threads (1..64; initially 1) for calls that do not pass
    num_threads=; safe at any time from any thread, results never depend on it."""
    _core.set_num_threads(_args.threads(n))


def set_result_cache(max_bytes: int) -> None:
    """Limit (bytes; 0: off) of the cache of freed large result blocks that the next
    results reuse; any call frees the blocks kept so far. See docs/API.md."""
    n = _args.index(max_bytes, "max_bytes")
    if n < 0:
        raise ValueError(f"max_bytes must be >= 0, got {n}")
    _core.set_result_cache(min(n, sys.maxsize))   # fits size_t everywhere


def get_result_cache() -> int:
    """The result cache's limit in bytes (0: off): QSIMD_RESULT_CACHE at import, else 1/32
    of the memory, at most 256 MiB; changed by set_result_cache()."""
    return _core.get_result_cache()


def get_num_threads() -> int:
    """The process-wide default number of threads."""
    return _core.get_num_threads()


def cpu_features() -> dict:
    """CPU features found at run time (and honoured by the OS)."""
    return _core.cpu_feature_bits()


def available_isas() -> list:
    """Instruction sets this build has and this CPU can run, slowest first."""
    return [n for n in _core.isa_names() if _core.isa_available(n)]


def get_isa() -> str:
    """The instruction set in use."""
    return _core.get_isa()


def set_isa(name=None) -> None:
    """Force an instruction set for the whole process ("scalar", "sse41", "avx2", "avx512",
    "neon"); None or "auto" picks the best one again. ValueError if it cannot run here.
    Safe at any time from any thread (docs/API.md); every set gives the same bits."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a string or None, got {type(name).__name__}")
    if name is not None and (not name.isascii() or "\0" in name):
        # the C call would stop at a NUL ("a\0b" reported as 'a') or fail to encode
        raise ValueError(f"unknown instruction set {name!r} (known: {', '.join(_core.isa_names())})")
    _core.set_isa(None if name in (None, "", "auto") else name)
