"""Arrays of other libraries, taken without copying: the one place where the public functions
turn x, scale, zero_point and out= into NumPy arrays.

- An ndarray is used as it is.
- An object with ``__dlpack__`` (PyTorch, JAX and other CPU tensors) becomes an ndarray over
  its memory (qsimd._core.from_dlpack): strided tensors stay strided (the general path then
  reads them in pieces), bfloat16 / float8 / e8m0 tensors get the ml_dtypes types, and a
  tensor on another device is a ValueError. (Contiguous CPU tensors of a type with a DLPack C
  exchange table never get here: the fast paths read them directly.)
- A buffer (bytes, bytearray, memoryview, array.array, ...) becomes an ndarray over it.
- An object with ``__array__`` or the array interface goes through np.asarray.
Python numbers and lists, NumPy scalars and anything else are left to the caller, whose
conversion rules for Python data apply (only Python floats and lists are rounded to
float32: a float64 array, tensor or NumPy scalar is a TypeError).
"""
from __future__ import annotations

import numpy as np

from . import _core

_PYTHON = (bool, int, float, complex, str, list, tuple, dict, set, np.generic, type(None))


def array_like(value, argname: str):
    """value as an ndarray when it is an array of some library; None for Python data."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, _PYTHON):
        return None
    t = type(value)
    if getattr(t, "__dlpack__", None) is not None:
        return _core.from_dlpack(value, argname)
    try:
        view = memoryview(value)
    except TypeError:
        view = None
    if view is not None:
        return _buffer(view, argname)
    if any(hasattr(t, a) for a in ("__array__", "__array_interface__", "__array_struct__")):
        try:
            return np.asarray(value)
        except Exception as e:   # noqa: BLE001 - another library's conversion failed
            raise TypeError(f"{argname}: {t.__name__} could not be converted to an array: "
                            f"{e}") from None
    return None


def _buffer(view: memoryview, argname: str) -> np.ndarray:
    try:
        return np.asarray(view)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{argname}: a buffer of format {view.format!r} is not an array NumPy "
                        f"reads ({e})") from None


def out_array(out) -> np.ndarray:
    """out= as a writable ndarray over the caller's memory."""
    if isinstance(out, np.ndarray):
        return out
    t = type(out)
    if not isinstance(out, _PYTHON):
        if getattr(t, "__dlpack__", None) is not None:
            return _core.from_dlpack(out, "out", True)
        try:
            view = memoryview(out)
        except TypeError:
            view = None
        if view is not None:
            if view.readonly:
                raise ValueError("out is read-only")
            return _buffer(view, "out")
    raise TypeError(f"out must be a NumPy array, a CPU tensor (DLPack) or a writable buffer, "
                    f"got {t.__name__}")


def arrays(*pairs):
    """array_like over (value, argname) pairs: each value converted, or left as it is."""
    out = []
    for value, argname in pairs:
        a = array_like(value, argname)
        out.append(value if a is None else a)
    return out
