"""Large inputs that are not C-contiguous (strided views, Fortran order, byte-swapped or
misaligned arrays) are processed in pieces: each piece is copied into one small buffer and
handed to the C core, writing its part of the result in place. The extra memory is bounded by
PIECE elements, not by the input (a whole copy of x[::2] of 32M float32 took 64 MiB).

A piece is a range of rows along one dimension k with the indices before k fixed, so its
result is a contiguous range of the C-order result, and its parameters are slices of the
caller's: per-axis scales along an axis before k become one entry (per-tensor), blocked scales
keep their blocks (pieces along the blocked axis start on block boundaries) or, along an axis
before k, become one entry per element. Every element sees the same x, scale and zero point
as in the whole call, so the bits are the same; packed results are cut on whole bytes.

Anything unusual (Python data for per-axis parameters, shapes or axes the whole call rejects,
float8 zero points, which the C core checks by value) is declined: the caller then copies as
before, and raises the whole call's error. The first piece runs without `out`, so a call that
fails does so before anything is written.
"""
from __future__ import annotations

import math

import numpy as np

from ._dtypes import DTYPE_TO_CODE, SUBBYTE_BITS, resolve

PIECE = 128 * 1024   # elements per piece: <= 512 KiB of x and of the piece's result
_FLOAT8 = (17, 18, 19, 20)


def wanted(x) -> bool:
    """True for a large ndarray that the general path would copy whole. Not for broadcast
    views (a zero stride): they may stand for far more elements than memory holds, and the
    whole call's MemoryError is the answer to those."""
    return (isinstance(x, np.ndarray) and x.size > PIECE and x.ndim > 0
            and not (x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative)
            and x.dtype.kind != "O" and x.dtype.newbyteorder("=") in DTYPE_TO_CODE
            and all(s or d == 1 for s, d in zip(x.strides, x.shape)))


def _params(shape, scale, zero_point, axis, block_size):
    """The granularity, as the C core's plan sees it: ("tensor",), ("axis", a) or
    ("blocked", a, B); None to decline."""
    if isinstance(zero_point, np.ndarray) and zero_point.size > 1 and \
            DTYPE_TO_CODE.get(zero_point.dtype.newbyteorder("=")) in _FLOAT8:
        return None   # checked by value in C: a later piece could fail after writes
    if not isinstance(scale, np.ndarray):
        ns = np.size(scale) if isinstance(scale, (list, tuple)) else 1
        if ns != 1 or (zero_point is not None and np.size(zero_point) != 1):
            return None
        return ("tensor",)
    if scale.size == 1 and (zero_point is None or np.size(zero_point) == 1):
        return ("tensor",)
    if zero_point is not None and not (isinstance(zero_point, np.ndarray)
                                       and zero_point.shape == scale.shape):
        return None
    if type(axis) is not int or type(block_size) is not int:
        return None
    n = len(shape)
    if not -n <= axis < n or block_size < 0:
        return None
    a = axis % n
    if block_size == 0:
        return ("axis", a) if scale.shape == (shape[a],) else None
    want = list(shape)
    want[a] = -(-shape[a] // block_size)
    return ("blocked", a, block_size) if list(scale.shape) == want else None


def _plan(shape, per, kind):
    """(k, rows): pieces are `rows` rows along dimension k with the indices before k fixed.
    `per`: a piece's element offset must be a multiple of it (packed results cut on whole
    bytes); blocked pieces along the blocked axis start on block boundaries."""
    n = len(shape)
    inner = [math.prod(shape[k + 1:]) for k in range(n)]
    ok = [k for k in range(n) if k == 0 or math.prod(shape[k:]) % per == 0]
    fit = [k for k in ok if inner[k] <= PIECE]
    k = fit[0] if fit else ok[-1]   # the largest pieces that fit; else the smallest rows
    step = per // math.gcd(inner[k], per)
    if kind[0] == "blocked" and kind[1] == k:
        step = step * kind[2] // math.gcd(step, kind[2])
    return k, max(step, PIECE // inner[k] // step * step)


def _slice(p, kind, prefix, k, lo, hi):
    """The parameter array p (scale or zero point) for a piece, with its axis and block."""
    if p is None or kind[0] == "tensor":
        return p, None
    a = kind[1]
    if kind[0] == "axis":
        if a < k:
            return p[prefix[a], ...], (0, 0)     # one entry: per-tensor
        return (p[lo:hi], (0, 0)) if a == k else (p, (a - k, 0))
    b = kind[2]
    idx = list(prefix)
    if a < k:
        idx[a] //= b
        return p[tuple(idx)][lo:hi], (-1, 1)     # one entry per element
    if a == k:
        return p[tuple(idx)][lo // b: -(-hi // b)], (0, b)
    return p[tuple(idx)][lo:hi], (a - k, b)


def run(op, x, scale, zero_point, axis, block_size, packed_bits, make_out, **kw):
    """Runs op(piece, scale, zero_point, axis=, block_size=, out=, **kw) over the pieces of
    x. make_out(dtype) -> (y, user_out) as _args.output. None: declined. Packed results
    (op returns PackedTensors) add the element type's code: (y, user_out, code)."""
    kind = _params(x.shape, scale, zero_point, axis, block_size)
    if kind is None:
        return None
    per = 8 // math.gcd(packed_bits, 8) if packed_bits else 1
    k, rows = _plan(x.shape, per, kind)
    inner = math.prod(x.shape[k + 1:])
    buf = np.empty(min(rows, x.shape[k]) * inner, x.dtype.newbyteorder("="))
    y = yflat = user_out = None
    code = 0
    for prefix, lo in ((p, lo) for p in np.ndindex(*x.shape[:k])
                       for lo in range(0, x.shape[k], rows)):
        hi = min(lo + rows, x.shape[k])
        src = x[prefix][lo:hi]
        tmp = buf[: src.size].reshape(src.shape)
        np.copyto(tmp, src)
        s, ab = _slice(scale, kind, prefix, k, lo, hi)
        z, _ = _slice(zero_point, kind, prefix, k, lo, hi)
        pa, pb = ab if ab is not None else (axis, block_size)
        off = ((int(np.ravel_multi_index(prefix, x.shape[:k])) if k else 0) * x.shape[k] + lo) \
            * inner
        if y is None:
            # the first piece without out=: a call that fails leaves `out` untouched, and
            # raises the whole call's error through the caller's ordinary path
            try:
                first = op(tmp, s, z, axis=pa, block_size=pb, **kw)
            except Exception:
                return None
            if packed_bits:   # a PackedTensor: its bytes, and the element type for the caller
                code = DTYPE_TO_CODE[np.dtype(first.dtype)]
                first = first.data
            y, user_out = make_out(first.dtype)
            yflat = y.reshape(-1)
            if packed_bits:
                yflat[off * packed_bits // 8: off * packed_bits // 8 + first.size] = first
            else:
                yflat[off: off + first.size] = first.reshape(-1)
            continue
        if packed_bits:
            b0 = off * packed_bits // 8
            dst = yflat[b0: b0 + (src.size * packed_bits + 7) // 8]
        else:
            dst = yflat[off: off + src.size].reshape(src.shape)
        op(tmp, s, z, axis=pa, block_size=pb, out=dst, **kw)
    return (y, user_out, code) if packed_bits else (y, user_out)


def packed_bits(output_dtype, zero_point):
    """Bits per element of a packed quantize result; 0 when unknown (declined)."""
    code = None
    if output_dtype is not None and not (isinstance(output_dtype, (int, np.integer))
                                         and output_dtype == 0):
        try:
            code = resolve(output_dtype, "output_dtype")
        except (TypeError, ValueError):
            return 0
    elif isinstance(zero_point, (np.ndarray, np.generic)):
        code = DTYPE_TO_CODE.get(zero_point.dtype.newbyteorder("="))
    return SUBBYTE_BITS.get(code, 0)


def dynamic(x, make_out, quantize, dynamic_quantize):
    """DynamicQuantizeLinear in pieces: the scale and zero point come from the whole tensor's
    NaN-ignoring range (NumPy's fmin/fmax reductions read strided data without a copy), given
    to the C core as the two-element tensor [min, max], which has the same range; then every
    piece is quantized with them, as the whole call quantizes every element."""
    with np.errstate(invalid="ignore"):
        lo, hi = np.fmin.reduce(x, axis=None), np.fmax.reduce(x, axis=None)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None   # inf / all-NaN ranges: the whole call's rules
    _, scale, zp = dynamic_quantize(np.array([lo, hi], np.float32))
    r = run(quantize, x, scale, zp, 1, 0, 0, lambda dt: make_out())
    return None if r is None else (r[0], r[1], scale, zp)
