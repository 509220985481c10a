"""Argument normalisation shared by the public Python API (_api.py) and qsimd.quark: Python
data, NumPy arrays of any byte order and other libraries' arrays (through _arrays) to native
arrays of the types an argument accepts, integer / flag / thread-count attributes, and output
allocation with `out=` (through a temporary when `out` overlaps an input). Every message
names the argument and what was expected."""
from __future__ import annotations

import math
import operator

import numpy as np

from . import _arrays, _core
from ._dtypes import (
    CODE_TO_DTYPE,
    DTYPE_TO_CODE,
    FLOAT_ZP_CODES,
    INT_RANGE,
    name_of,
)


def names(codes) -> str:
    parts = [name_of(c) for c in codes]
    if len(parts) == 1:   # "x must be float32", not "x must be  or float32"
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def native(a: np.ndarray) -> np.ndarray:
    """A C-contiguous, aligned, native-byte-order ndarray (not a subclass) with the same
    values."""
    if type(a) is not np.ndarray:
        a = a.view(np.ndarray)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not (a.flags.c_contiguous and a.flags.aligned):
        a = a.copy(order="C")   # not np.ascontiguousarray: that makes a 0-d array 1-d
    return a


def too_many_dims(ndim: int):
    """Once the general path has normalised the arguments, the fast paths decline only
    tensors of rank > 32: the error for those."""
    raise ValueError(f"arrays of rank {ndim} are not supported (at most 32 dimensions)")


def python_ints(value, code: int, argname: str) -> np.ndarray:
    """Python integers (or integer arrays) -> array of ONNX type `code`, range-checked."""
    a = np.asarray(value)
    empty_list = a.size == 0 and a.dtype == np.float64   # NumPy's type for [] and [[], []]
    if (a.dtype.kind not in "iu" or a.dtype == np.bool_) and not empty_list:
        raise TypeError(f"{argname} must hold integers for type {name_of(code)}, got {a.dtype}")
    lo, hi = INT_RANGE[code]
    if a.size and (int(a.min()) < lo or int(a.max()) > hi):
        raise ValueError(f"{argname} values must lie in [{lo}, {hi}] for type {name_of(code)}")
    return a.astype(CODE_TO_DTYPE[code], order="C")   # keeps 0-d inputs 0-d


def param_limit(shape) -> int:
    """The most scale / zero-point entries any layout of an x of this shape can use
    (per-tensor 1, per-axis a dimension, blocked at most x's element count)."""
    return max([1, math.prod(shape)] + list(shape))


def float_input(value, argname: str, codes, ints_exact: bool,
                 limit=None) -> tuple[np.ndarray, int]:
    """x or scale: an array (NumPy's, a tensor, a buffer) or a NumPy scalar keeps its dtype,
    which must be supported (float64 is refused, never rounded); Python data (numbers, lists)
    becomes float32, and integers (also NumPy integer scalars) int32 when `ints_exact` (x of
    QuantizeLinear: divided exactly, as ONNX does), else float32."""
    a = _arrays.array_like(value, argname)
    if a is None:
        a = np.asarray(value)   # NumPy scalars keep their dtype here
        if a.dtype.kind in "iu" and DTYPE_TO_CODE.get(a.dtype) not in codes:
            a = python_ints(a, 6, argname) if ints_exact else a.astype(np.float32)
        elif not isinstance(value, np.generic) and a.dtype in (np.float64, np.longdouble):
            a = a.astype(np.float32)   # Python floats and lists
    return _of_codes(a, argname, codes, limit, "be {}", True)


def _of_codes(a, argname, codes, limit, expected, float_hint=False):
    """a (native, checked in size) and its code, which must be one of `codes`. `expected`
    takes the list of `codes` at {} in the message (built only on an error: names() costs
    more than the rest of a small call)."""
    code = DTYPE_TO_CODE.get(a.dtype.newbyteorder("=")) if a.dtype.kind != "O" else None
    if code is None or code not in codes:
        hint = " (cast it to float32 first: qsimd never rounds it silently)" \
            if float_hint and a.dtype.kind == "f" and a.dtype.itemsize > 4 else ""
        raise TypeError(f"{argname} must {expected.format(names(codes))}, got {a.dtype}{hint}")
    # before any copy: a broadcast view of absurd size is refused, not materialised
    if limit is not None and a.size > limit:
        raise ValueError(f"{argname} has {a.size} elements, more than any layout of x can use "
                         f"({limit})")
    return native(a), code


def python_floats(value, code: int, argname: str) -> np.ndarray:
    """Python numbers -> array of the float type `code` (float8, float4, float16, bfloat16).
    Values must be exact in that type: a zero point is never rounded silently."""
    a = np.asarray(value)
    if a.dtype.kind not in "iuf" or a.dtype == np.bool_:
        raise TypeError(f"{argname} must hold numbers for type {name_of(code)}, got {a.dtype}")
    a = a.astype(np.float64)
    with np.errstate(all="ignore"):
        out = a.astype(CODE_TO_DTYPE[code])
        back = out.astype(np.float64)
    if not np.array_equal(back, a, equal_nan=True):
        raise ValueError(f"{argname} values must be exactly representable in {name_of(code)}")
    return out   # keeps 0-d inputs 0-d


def typed_array(value, argname: str, code_hint, codes, limit=None) -> tuple[np.ndarray, int]:
    """x (DequantizeLinear) or a zero point: an array (or a NumPy scalar of a quantized type)
    keeps its dtype, which must be in `codes`; Python data takes the type `code_hint`
    (integers range-checked, float types exact)."""
    a = _arrays.array_like(value, argname)
    if a is None:
        a = np.asarray(value)   # NumPy scalars and lists of them keep their dtype
        if a.dtype.kind == "O" or DTYPE_TO_CODE.get(a.dtype) is None:
            if isinstance(value, np.generic) and a.dtype.kind == "f":
                raise TypeError(f"{argname} must have a quantized type ({names(codes)}), got "
                                f"{a.dtype}")
            if code_hint in FLOAT_ZP_CODES:
                return python_floats(a, code_hint, argname), code_hint
            return python_ints(a, code_hint, argname), code_hint
    return _of_codes(a, argname, codes, limit, "have a quantized type ({})")


def is_zero_code(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) \
        and value == 0


def index(value, argname: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{argname} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{argname} must be an integer, got {type(value).__name__}") from None


def attr64(value, argname: str) -> int:
    """axis / block_size: an integer that fits the int64 ONNX attribute (beyond it the C call
    would raise OverflowError, which callers do not expect)."""
    v = index(value, argname)
    if not -2**63 <= v < 2**63:
        raise ValueError(f"{argname} {v} is out of range (ONNX attributes are int64)")
    return v


def flag(value, argname: str) -> bool:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
        return bool(value)
    raise ValueError(f"{argname} must be True/False (or 1/0), got {value!r}")


def output(out, shape, dtype, inputs):
    """(the array the C core writes into, dest): dest is None without `out`, else (the
    caller's out, the ndarray to copy the result into afterwards or None). A copy is made when
    `out` is strided, misaligned, byte-swapped or overlaps an input: the C core never sees
    overlapping buffers (its API does not allow them). `out` may be a tensor or a buffer."""
    if out is None:
        return _core.new_result(tuple(shape), dtype), None
    given = out
    out = _arrays.out_array(out)
    if out.dtype != dtype and out.dtype.newbyteorder("=") != dtype:   # byte order: converted
        raise ValueError(f"out must have dtype {dtype}, got {out.dtype}")
    if out.shape != tuple(shape):
        raise ValueError(f"out must have shape {tuple(shape)}, got {out.shape}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    if out.flags.c_contiguous and out.flags.aligned and out.dtype.isnative and not any(
            np.may_share_memory(out, a) for a in inputs if isinstance(a, np.ndarray)):
        if type(out) is not np.ndarray or out.dtype.num != dtype.num:   # int32 as long
            out = out.view(dtype=dtype, type=np.ndarray)   # what the C bridge takes
        return out, (given, None)
    return _core.new_result(tuple(shape), dtype), (given, out)


def finish(y, dest):
    """The result to return: y, or with `out=` the caller's out (filled)."""
    if dest is None:
        return y
    given, copy_to = dest
    if copy_to is not None:
        np.copyto(copy_to, y, casting="equiv")   # "equiv": only a byte-order change is allowed
    return given


def threads(value) -> int:
    if value is None:
        return 0   # the process default (set_num_threads)
    n = index(value, "num_threads")
    if not 1 <= n <= 64:
        raise ValueError(f"num_threads must be between 1 and 64, got {n}")
    return n
