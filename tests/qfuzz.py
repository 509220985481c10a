"""API fuzzer: random, often malformed calls to every public qsimd function.

Each case is a valid call (shapes, scales, zero points, attributes drawn at random) that is
then disguised in ways that must not change its result (strided, Fortran, reversed,
misaligned, big-endian or read-only arrays, Python lists, PyTorch tensors or DLPack-only
objects over the same memory, `out=` in odd layouts, as a tensor or overlapping the input)
and, half of the time, broken in ways that may make it fail (garbage types, wrong shapes,
out-of-range attributes, absurd sizes, bad `out=`, bad PackedTensor). The plain call a valid
case is compared with runs on another instruction set.

Surfaces: quantize_linear, dequantize_linear (also of PackedTensor), dynamic_quantize_linear,
dynamic_quantize, pack, unpack, set_isa / set_num_threads, Quantizer / Dequantizer (built
from a maybe broken call's parameters: they must accept and refuse what the plain function
does, with the same exception type, and give its bits), qsimd.quark's MX / BFP and
quantize_mx, and qsimd.onnx's boundary / split_boundary on small QDQ models, mutated
(dropped inputs, duplicate names, unknown data types, odd attributes and opsets) or corrupt
(truncated or flipped bytes), given as ModelProto, bytes or a path.

The rules checked for every call:
  * it returns, or raises TypeError / ValueError with a non-empty message (MemoryError only
    for sizes that cannot be allocated); a call left valid must succeed;
  * a result has the expected shape and dtype, equals the same call made with plain arrays,
    and (where a NumPy oracle is cheap) the oracle's value;
  * no byte outside `out` changes: `out` lives inside a canary-filled buffer, and inputs that
    do not overlap `out` keep their bytes.

Used by tests/test_fuzz_api.py (hypothesis drives the random choices, a few seconds) and as a
campaign: `python tests/qfuzz.py --calls 200000 [--seed N]` (run it under the ASan build to
catch out-of-bounds reads too).
"""
from __future__ import annotations

import argparse
import array as array_module
import faulthandler
import math
import os
import random
import sys
import time

import ml_dtypes
import numpy as np

import qsimd

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32, U32 = np.dtype(np.int32), np.dtype(np.uint32)
INT_OUT = {  # dtype -> (qmin, qmax)
    np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127),
    np.dtype(np.uint16): (0, 65535), np.dtype(np.int16): (-32768, 32767),
    np.dtype(ml_dtypes.uint4): (0, 15), np.dtype(ml_dtypes.int4): (-8, 7),
    np.dtype(ml_dtypes.uint2): (0, 3), np.dtype(ml_dtypes.int2): (-2, 1),
}
SUBBYTE = {np.dtype(ml_dtypes.uint4): 4, np.dtype(ml_dtypes.int4): 4,
           np.dtype(ml_dtypes.uint2): 2, np.dtype(ml_dtypes.int2): 2}
DQ_IN = {**INT_OUT, I32: (-2**31, 2**31 - 1), U32: (0, 2**32 - 1)}
Q_X = (F32, F16, BF16, I32)
FLOAT_OUT = (F32, F16, BF16)
OK_ERRORS = (TypeError, ValueError)

class _BadDLPack:
    """A DLPack producer that misbehaves in one way."""

    def __init__(self, how):
        self.how = how

    def __dlpack__(self, **kw):
        if self.how == "raises":
            raise RuntimeError("producer failure")
        if self.how == "type":
            raise TypeError("unexpected")
        return 42 if self.how == "no-capsule" else np.zeros(3, np.float32).__dlpack__()

    def __dlpack_device__(self):
        return {"gpu": (2, 0), "weird": 5, "odd-device": (99, 3)}.get(self.how, (1, 0))

    def __repr__(self):
        return f"_BadDLPack({self.how!r})"


# Things that are not arrays of a supported type, for any argument.
GARBAGE = [
    None, "abc", b"\x00\x01", 3 + 4j, {}, object(), [[1.0], [1.0, 2.0]], [None], [],
    np.array([1, None], object), np.ones(3, bool), np.ones(3, np.complex64),
    np.ones(3, np.float64), np.ones(3, np.int64), np.ones(3, np.uint64), np.array(["a", "b"]),
    np.array(["2020-01-01"], "datetime64[D]"), np.ones(3, ml_dtypes.float8_e4m3fn),
    np.ones(2, [("a", np.float32), ("b", np.int8)]), np.ones(3, np.longdouble), 2**70, -2**70,
    float("nan"), True, np.ones((2, 2), np.float32).T, memoryview(b"abcd"),
    _BadDLPack("raises"), _BadDLPack("type"), _BadDLPack("no-capsule"), _BadDLPack("gpu"),
    _BadDLPack("weird"), _BadDLPack("odd-device"), bytearray(b"\x00" * 8), array_module.array("d", [1.0]),
]
WEIRD_INTS = [-2**100, -2**63 - 1, -2**63, -2**31 - 1, -65, -33, -9, -2, -1, 0, 1, 2, 3, 7,
              31, 32, 33, 64, 65, 2**31, 2**32 + 1, 2**63 - 1, 2**63, 2**64, 2**100]
WEIRD_NONINTS = [1.0, 1.5, "1", None, True, False, np.bool_(True), np.float32(1), [1], (1,),
                 float("nan"), 3 + 0j]
DTYPE_SPECS = ["int4", "INT4", "uint2", "int2", "uint4", "uint8", "int8", "uint16", "int16",
               "float32", "float16", "bfloat16", "int32", "uint32", "float64", "float8e4m3fn",
               "TensorProto.INT8", "tensorproto.uint4", "", " ", "int3", "\x00", "ü",
               np.uint8, np.int8, np.float32, np.float64, np.complex64, ml_dtypes.int4,
               ml_dtypes.uint2, ml_dtypes.bfloat16, ml_dtypes.float4_e2m1fn, object, bool, str,
               np.dtype(">u2"), np.dtype(">f4"), 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 14, 16, 17,
               21, 22, 23, 24, 25, 26, 27, -1, 2**40, None, 1.0, True, [], "float"]


class Fail(AssertionError):
    pass


# ---------------------------------------------------------------------- value generation
_GEN = np.random.Generator(np.random.PCG64(0))


def _np_rng(r) -> np.random.Generator:
    """NumPy values drawn from `r` (so hypothesis controls them); setting the state directly
    is ~20x cheaper than seeding a new generator."""
    _GEN.bit_generator.state = {"bit_generator": "PCG64", "has_uint32": 0, "uinteger": 0,
                                "state": {"state": r.getrandbits(128),
                                          "inc": r.getrandbits(128) | 1}}
    return _GEN


def gen_shape(r, lo=0):
    k = r.random()
    if k < 0.08:
        return ()
    if k < 0.0805:   # rarely: enough elements for several threads (256K each)
        return r.choice([(600_011,), (3, 200_003), (2, 7, 40_009)])
    if k < 0.45:
        return (r.choice([lo, 1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 64, 65, 100, 257, 300]),)
    rank = r.randint(2, 4) if k < 0.97 else r.randint(5, 12)
    while True:   # at most a few thousand elements
        shape = tuple(r.choice([lo, 1, 1, 1, 2, 3]) if rank > 4 else
                      r.choice([lo, 1, 2, 3, 4, 5, 6, 9]) for _ in range(rank))
        if math.prod(shape) <= 5000:
            return shape


def gen_floats(g, shape, dt, special=0.15):
    v = g.standard_normal(shape) * 10.0 ** g.integers(-3, 5, shape)
    if special and v.size:
        pick = g.random(shape) < special
        sp = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3.4e38, -3.4e38, 0.5, 2.5,
                       -2.5, 65504.0, 1e10, -1e10, 127.5, 255.5])
        v = np.where(pick, sp[g.integers(0, sp.size, shape)], v)
    with np.errstate(all="ignore"):
        return np.asarray(v).astype(dt)


def gen_ints(g, shape, dt, lo, hi):
    v = g.integers(lo, hi + 1, shape, dtype=np.int64)
    if v.size:   # the extremes, often
        v = np.where(g.random(shape) < 0.2, np.where(g.random(shape) < 0.5, lo, hi), v)
    return np.asarray(v).astype(dt)


def gen_scale(g, shape, dt):
    if dt == I32:
        v = g.integers(-3, 1000, shape)
        return np.asarray(v).astype(I32)
    v = np.abs(g.standard_normal(shape)) * 10.0 ** g.integers(-4, 3, shape) + 1e-6
    if v.size and g.random() < 0.3:
        sp = np.array([0.0, -0.0, -1.0, np.nan, np.inf, 1e-40, 1e30, -0.5])
        v = np.where(g.random(shape) < 0.2, sp[g.integers(0, sp.size, shape)], v)
    with np.errstate(all="ignore"):
        return np.asarray(v).astype(dt)


# ---------------------------------------------------------------------- cases
class Case:
    """One call. `base` holds the valid arguments in plain form, `args`/`kwargs` what is
    actually passed (disguised and maybe broken)."""

    def __init__(self, op):
        self.op = op
        self.base_args = []
        self.base_kwargs = {}
        self.args = []
        self.kwargs = {}
        self.valid = True       # only disguises applied: must succeed
        self.huge = False       # MemoryError allowed
        self.out_guard = None   # (buffer, canary copy, mask)
        self.notes = []         # what was done, for the failure message
        self.isa = None
        self.calls = 0          # API calls made by run_case

    def describe(self):
        def short(v):
            if isinstance(v, np.ndarray):
                return (f"ndarray(shape={v.shape}, dtype={v.dtype.str}, "
                        f"strides={v.strides}, C={v.flags.c_contiguous})")
            if isinstance(v, qsimd.PackedTensor):
                return f"PackedTensor({short(v.data)}, {v.dtype!r}, {v.shape!r})"
            s = repr(v)
            return s if len(s) < 80 else s[:77] + "..."
        a = ", ".join(short(v) for v in self.args)
        k = ", ".join(f"{n}={short(v)}" for n, v in self.kwargs.items())
        return (f"{self.op}({a}{', ' if a and k else ''}{k}) isa={self.isa} "
                f"valid={self.valid} notes={self.notes}")


def _disguise(r, g, a: np.ndarray, case, what):
    """The same values in another layout / byte order / container."""
    k = r.random()
    if k < 0.35 or a.ndim == 0 and k < 0.6:
        return a
    if k < 0.45:
        b = a.copy()
        b.flags.writeable = False
        case.notes.append(f"{what}:readonly")
        return b
    if k < 0.55 and a.dtype.itemsize > 1:
        try:
            b = a.astype(a.dtype.newbyteorder(">"))
        except (TypeError, ValueError):
            return a
        case.notes.append(f"{what}:big-endian")
        return b
    if k < 0.65 and a.ndim:
        case.notes.append(f"{what}:fortran")
        return np.asfortranarray(a)
    if k < 0.75 and a.ndim:
        case.notes.append(f"{what}:reversed")
        sl = tuple(slice(None, None, -1) for _ in range(a.ndim))
        return a[sl].copy()[sl]
    if k < 0.85 and a.ndim:
        case.notes.append(f"{what}:strided")
        big = np.empty(a.shape[:-1] + (a.shape[-1] * 2 + 1,), a.dtype)
        v = big[..., 1::2]
        v[...] = a
        return v
    # misaligned (unless itemsize 1): inside a byte buffer at offset 1
    raw = np.empty(a.nbytes + 1, np.uint8)
    b = np.ndarray(a.shape, a.dtype, buffer=raw, offset=1)
    b[...] = a
    case.notes.append(f"{what}:misaligned")
    return b


def _listify_ok(a):
    # tolist() of an empty array loses the dimensions after the first zero
    return isinstance(a, np.ndarray) and a.dtype in (F32, I32) and (a.size or a.ndim <= 1)


def _guarded(r, shape, dtype, case):
    """An `out` array placed in a canary buffer, in a random layout."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    kind = r.choice(["c", "c", "f", "step", "rev", "mis"]) if shape else r.choice(["c", "mis"])
    pad = 32
    step = 2 if kind == "step" else 1
    size = pad * 2 + 1 + n * dtype.itemsize * step
    g = _np_rng(r)
    buf = g.integers(0, 256, size, dtype=np.uint8)
    off = pad + (1 if kind == "mis" and dtype.itemsize > 1 else 0)
    if kind == "step":
        full = np.ndarray(shape[:-1] + (shape[-1] * 2,), dtype, buffer=buf, offset=off)
        out = full[..., ::2]
    else:
        out = np.ndarray(shape, dtype, buffer=buf, offset=off, order="F" if kind == "f" else "C")
        if kind == "rev":
            out = out[tuple(slice(None, None, -1) for _ in shape)]
    mask = np.zeros(size, np.uint8)
    start = out.__array_interface__["data"][0] - buf.__array_interface__["data"][0]
    m = np.lib.stride_tricks.as_strided(mask[start:], out.shape + (dtype.itemsize,),
                                        out.strides + (1,))
    m[...] = 1
    case.out_guard = (buf, buf.copy(), mask.astype(bool))
    case.notes.append(f"out:{kind}")
    return out


def _in_place_out(r, x, shape, dtype, case):
    """`out` sharing memory with x (exactly or shifted), when the byte sizes allow it."""
    dtype = np.dtype(dtype)
    if not isinstance(x, np.ndarray) or not x.flags.c_contiguous or not x.flags.writeable:
        return None
    if x.dtype.itemsize < dtype.itemsize or x.nbytes == 0 or x.ndim == 0:
        return None
    raw = x.reshape(-1).view(np.uint8)
    n = math.prod(shape)
    room = raw.size - n * dtype.itemsize
    if room < 0:
        return None
    shift = r.choice([0, 0, room, r.randint(0, room)])
    shift -= shift % dtype.alignment if r.random() < 0.8 else 0
    out = np.ndarray(shape, dtype, buffer=raw, offset=shift)
    case.notes.append(f"out:overlaps-x@{shift}")
    return out


def gen_quantize(r, g, case):
    shape = gen_shape(r)
    xt = r.choice(Q_X)
    x = gen_ints(g, shape, I32, -2**31, 2**31 - 1) if xt == I32 else gen_floats(g, shape, xt)
    rank = len(shape)
    gran = r.choice(["tensor", "tensor", "axis", "block"]) if rank else "tensor"
    st = r.choice((F32, F32, F16, BF16, I32))
    axis, bs = 1, 0
    if gran == "tensor":
        sshape = r.choice([(), (1,), (1, 1)]) if r.random() < 0.3 else ()
    else:
        axis = r.randint(-rank, rank - 1)
        a = axis % rank
        if gran == "axis":
            sshape = (shape[a],)
        else:
            d = shape[a]
            bs = r.randint(1, max(1, d + 2))
            sshape = shape[:a] + (-(-d // bs),) + shape[a + 1:]
    scale = gen_scale(g, sshape, st)
    ot = r.choice(list(INT_OUT))
    qmin, qmax = INT_OUT[ot]
    zp = gen_ints(g, sshape, ot, qmin, qmax) if r.random() < 0.6 else None
    kw = {}
    if gran != "tensor" or r.random() < 0.2:
        kw["axis"] = axis
    if bs or r.random() < 0.1:
        kw["block_size"] = bs
    if zp is None or r.random() < 0.4:
        spec = r.choice([ot, ot.name, ot.type, {np.dtype(np.uint8): 2, np.dtype(np.int8): 3,
                         np.dtype(np.uint16): 4, np.dtype(np.int16): 5}.get(ot, ot.name)])
        if zp is not None or ot != np.dtype(np.uint8) or r.random() < 0.5:
            kw["output_dtype"] = spec
    if r.random() < 0.15:
        kw["precision"] = r.choice([F32, F16, BF16, "float16", 1, 16, 0, None])
    if r.random() < 0.15:
        kw["saturate"] = r.choice([True, False, 1, 0])
    packed = ot in SUBBYTE and r.random() < 0.5
    if packed:
        kw["packed"] = True
    if r.random() < 0.2:
        kw["num_threads"] = r.choice([None, 1, 2, 3, 8, 64])
    # the plain call and the oracle keep their own copies: an `out` overlapping x overwrites it
    x0, s0, z0 = _copy(x), _copy(scale), _copy(zp)
    case.base_args = [x0, s0, z0]
    case.base_kwargs = dict(kw)
    case.expect = ((-(-x.size * SUBBYTE[ot] // 8),) if packed else shape,
                   np.dtype(np.uint8) if packed else ot)
    case.oracle = ("q", x0, s0, z0, axis, bs, ot, kw.get("precision"), packed)
    return x, scale, zp, kw


def gen_dequantize(r, g, case, packed_input=False):
    shape = gen_shape(r)
    rank = len(shape)
    xt = r.choice(list(SUBBYTE) if packed_input else list(DQ_IN))
    lo, hi = DQ_IN[xt]
    x = gen_ints(g, shape, xt, lo, hi)
    gran = r.choice(["tensor", "tensor", "axis", "block"]) if rank else "tensor"
    axis, bs = 1, 0
    if gran == "tensor":
        sshape = r.choice([(), (1,)]) if r.random() < 0.3 else ()
    else:
        axis = r.randint(-rank, rank - 1)
        a = axis % rank
        if gran == "axis":
            sshape = (shape[a],)
        else:
            d = shape[a]
            bs = r.randint(1, max(1, d + 2))
            sshape = shape[:a] + (-(-d // bs),) + shape[a + 1:]
    st = r.choice(FLOAT_OUT)
    scale = gen_scale(g, sshape, st)
    zp = gen_ints(g, sshape, xt, lo, hi) if r.random() < 0.6 else None
    kw = {}
    if gran != "tensor" or r.random() < 0.2:
        kw["axis"] = axis
    if bs or r.random() < 0.1:
        kw["block_size"] = bs
    yt = st
    if r.random() < 0.3:
        yt = r.choice(FLOAT_OUT)
        kw["output_dtype"] = r.choice([yt, yt.name, {F32: 1, F16: 10, BF16: 16}[yt]])
    if r.random() < 0.2:
        kw["num_threads"] = r.choice([None, 1, 2, 4, 64])
    xin = x
    if packed_input:
        spec = r.choice([xt, xt.name, {"uint4": 21, "int4": 22, "uint2": 25, "int2": 26}[xt.name]])
        data = qsimd.pack(x) if x.ndim else qsimd.pack(x.reshape(1))
        if r.random() < 0.2:
            data = data.tobytes()
        xin = qsimd.PackedTensor(data, spec, r.choice([shape, list(shape)]))
    x0, s0, z0 = _copy(x), _copy(scale), _copy(zp)
    case.base_args = [_copy(xin), s0, z0]
    case.base_kwargs = dict(kw)
    case.expect = (shape, yt)
    case.oracle = ("dq", x0, s0, z0, axis, bs, yt)
    return xin, scale, zp, kw


def _huge_array(r):
    """A view whose shape cannot be materialised."""
    dt = r.choice([F32, I32, np.dtype(np.uint8), F16])
    shape = r.choice([(2**40,), (2**20, 2**22), (3, 2**41), (2**31, 2**31, 1), (2**62,),
                      (2**33,) * 2, (0, 2**62), (2**62, 0, 5), (2**45, 2**30)])
    try:
        return np.broadcast_to(np.zeros((), dt), shape)
    except ValueError:   # NumPy itself refuses the shape
        return np.broadcast_to(np.zeros((), dt), (2**40,))


def _high_rank(r, dt):
    k = r.randint(33, 64)
    shape = [1] * k
    for _ in range(r.randint(0, 3)):
        shape[r.randrange(k)] = 2
    try:
        return np.zeros(shape, dt)
    except ValueError:   # NumPy before 2.0: at most 32 dimensions
        return np.zeros([1] * 32, dt)


def _break(r, g, case, kind):
    """Replace one argument with something that may well be invalid."""
    args, kw = case.args, case.kwargs
    what = r.choice(["x", "scale", "zp", "axis", "block_size", "output_dtype", "precision",
                     "saturate", "packed", "out", "num_threads", "extra", "x", "scale", "out"])
    case.notes.append(f"break:{what}")
    case.valid = False
    if what == "x":
        k = r.random()
        if k < 0.25:
            args[0] = _huge_array(r)
            case.huge = True
        elif k < 0.4:
            args[0] = _high_rank(r, r.choice([F32, np.dtype(np.uint8), I32]))
        elif k < 0.5 and isinstance(args[0], qsimd.PackedTensor):
            d, spec, shp = args[0]
            m = r.choice(["data+", "data-", "dtype", "shape", "shape-huge", "data-type", "shape-neg",
                          "shape-rank"])
            if m == "data+":
                d = np.concatenate([np.frombuffer(bytes(d), np.uint8), np.zeros(1, np.uint8)])
            elif m == "data-":
                d = np.frombuffer(bytes(d), np.uint8)[:-1]
            elif m == "dtype":
                spec = r.choice(DTYPE_SPECS)
            elif m == "shape":
                shp = tuple(shp) + (r.choice([0, 2, 3]),)
            elif m == "shape-huge":
                shp = r.choice([(2**62, 4), (0, 2**62, 2**62), (2**31, 2**31), (2**64,), (2**100,)])
            elif m == "data-type":
                d = r.choice([np.zeros(3, np.int8), np.zeros(2, np.uint16), [1, 2], "ab", None,
                              np.zeros((2, 2), np.uint8)])
            elif m == "shape-neg":
                shp = tuple(shp) + (-1,)
            else:
                shp = r.choice([(1,) * 70, 5, "ab", None, (1.5,), ((2,),)])
            args[0] = qsimd.PackedTensor(d, spec, shp)
            case.huge = case.huge or m == "shape-huge"
        else:
            args[0] = r.choice(GARBAGE)
    elif what == "scale":
        k = r.random()
        if k < 0.5:
            shp = gen_shape(r, lo=0)
            args[1] = gen_scale(g, shp, r.choice([F32, F16, BF16, I32]))
        elif k < 0.6:
            args[1] = _huge_array(r)
            case.huge = True
        else:
            args[1] = r.choice(GARBAGE)
    elif what == "zp":
        k = r.random()
        if k < 0.4:
            dt = r.choice(list(DQ_IN))
            lo, hi = DQ_IN[dt]
            args[2] = gen_ints(g, gen_shape(r), dt, lo, hi)
        elif k < 0.6:
            args[2] = r.choice([[300], [-1], 2**40, -129, [0, 1, 2], 255, 7, -8])
        elif k < 0.7:
            args[2] = _huge_array(r)
            case.huge = True
        else:
            args[2] = r.choice(GARBAGE)
    elif what in ("axis", "block_size"):
        kw[what] = r.choice(WEIRD_INTS + WEIRD_NONINTS) if r.random() < 0.7 else r.randint(-6, 6)
    elif what == "output_dtype":
        kw[what] = r.choice(DTYPE_SPECS)
    elif what == "precision":
        kw[what] = r.choice(DTYPE_SPECS)
    elif what in ("saturate", "packed"):
        kw[what] = r.choice([2, -1, "yes", None, 1.0, [], True, False, np.bool_(True)])
    elif what == "num_threads":
        kw[what] = r.choice(WEIRD_INTS + WEIRD_NONINTS)
    elif what == "extra":
        kw[r.choice(["axes", "blocksize", "dtype"])] = 1
    elif what == "out":
        shape, dt = case.expect
        k = r.random()
        if k < 0.2:
            kw["out"] = np.empty(tuple(shape) + (1,), dt)
        elif k < 0.35:
            kw["out"] = np.empty(shape, r.choice([F32, F64, np.dtype(np.uint8), np.dtype(np.int8),
                                                  I32, BF16, np.dtype(ml_dtypes.int4)]))
        elif k < 0.5:
            o = np.empty(shape, dt)
            o.flags.writeable = False
            kw["out"] = o
        elif k < 0.6:
            kw["out"] = np.broadcast_to(np.empty((), dt), shape)
        elif k < 0.7 and dt.itemsize > 1:
            kw["out"] = np.empty(shape, dt.newbyteorder(">"))
        elif k < 0.8:
            kw["out"] = np.empty(shape, dt).tolist()
        else:
            kw["out"] = r.choice(GARBAGE)


# ---------------------------------------------------------------------- other libraries' arrays
def _torch():
    """PyTorch, unless absent or the run is under ASan (a sanitized interpreter and torch's
    own libraries do not mix)."""
    global _TORCH
    if _TORCH is None:
        _TORCH = False
        if not os.environ.get("QSIMD_UNDER_ASAN") and not os.environ.get("QSIMD_TEST_NO_TORCH"):
            try:
                import torch
                _TORCH = torch
            except ImportError:
                pass
    return _TORCH


_TORCH = None


class DL:
    """An array behind the DLPack protocol only: NumPy's own exporter, or a PyTorch tensor over
    the same memory. `a` is the array (for the checks)."""

    def __init__(self, a, t=None):
        self.a = a
        self._t = t
        self.__dlpack_device__ = (t if t is not None else a).__dlpack_device__

    def __dlpack__(self, **kw):
        return (self._t if self._t is not None else self.a).__dlpack__(**kw)

    def __repr__(self):
        return f"DL({'torch' if self._t is not None else 'numpy'}, {self.a.dtype}, " \
               f"{self.a.shape}, {self.a.strides})"


_TORCH_DTYPES = ("float32", "float16", "uint8", "int8", "int16", "int32")
_NUMPY_MAJOR = int(np.__version__.split(".")[0])


def _as_tensor(r, a, writable):
    """a (an ndarray) as a torch tensor, a DLPack-only object, or None when neither can hold
    it: ml_dtypes' sub-byte types, big-endian data."""
    if not isinstance(a, np.ndarray) or not a.dtype.isnative or a.dtype.kind not in "iuf" \
            and a.dtype != BF16:
        return None
    torch = _torch()
    if torch and r.random() < 0.7 and all(s >= 0 for s in a.strides) and \
            (a.flags.writeable or not writable) and (a.dtype.name in _TORCH_DTYPES or a.dtype == BF16):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # from_numpy of a read-only array warns
            if a.dtype == BF16:
                t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
            else:
                t = torch.from_numpy(a)
        return t if r.random() < 0.6 else DL(a, t)
    if a.dtype == BF16 or (not a.flags.writeable and (writable or _NUMPY_MAJOR < 2)):
        return None   # (NumPy 1.x exports no read-only arrays)
    return DL(a)


def _base(v):
    """The ndarray behind a disguised value (for the input / canary checks)."""
    if isinstance(v, DL):
        return v.a
    torch = _torch()
    if torch and isinstance(v, torch.Tensor):
        return getattr(v, "_qfuzz_base", None)
    return v


def _tensorize(r, v, case, what, writable=False):
    """Sometimes hand the value over as a tensor / DLPack object instead of an ndarray."""
    if not isinstance(v, np.ndarray) or r.random() > 0.25:
        return v
    t = _as_tensor(r, v, writable)
    if t is None:
        return v
    torch = _torch()
    if torch and isinstance(t, torch.Tensor):
        t._qfuzz_base = v
    case.notes.append(f"{what}:{type(t).__name__}")
    return t


# ---------------------------------------------------------------------- more surfaces
_PREP_KW = {"q": ("axis", "block_size", "output_dtype", "saturate", "precision", "packed",
                  "num_threads"),
            "dq": ("axis", "block_size", "output_dtype", "num_threads")}


def gen_prep(r, g, case, kind):
    """A Quantizer / Dequantizer built from a (maybe broken) call's parameters: it must accept
    and reject what the plain function does, and give its bits."""
    if kind == "q":
        x, scale, zp, kw = gen_quantize(r, g, case)
    else:
        x, scale, zp, kw = gen_dequantize(r, g, case)
    case.args, case.kwargs = [_disguise(r, g, x, case, "x"), scale, zp], dict(kw)
    if r.random() < 0.5:
        _break(r, g, case, kind)
    case.args = [_tensorize(r, a, case, n) for a, n in zip(case.args, ("x", "scale", "zp"))]
    case.prep = kind
    return case


def gen_dynq(r, g, case):
    shape = gen_shape(r, lo=1)
    if not shape:
        shape = (r.randint(1, 9),)
    x = gen_floats(g, shape, F32, special=r.choice([0, 0.05, 0.5]))
    rank = len(shape)
    axis = r.randint(-rank, rank - 1)
    d = shape[axis % rank]
    kw = {"axis": axis}
    bs = r.choice([None, None, 1, 2, 3, d, d + 1, 2**31, 2**63 - 1, r.randint(1, d + 2)])
    if bs is not None or r.random() < 0.3:
        kw["block_size"] = bs
    ot = r.choice(["uint8", "int8", "uint4", "int4"])
    if ot != "uint8" or r.random() < 0.3:
        kw["output_dtype"] = r.choice([ot, np.dtype(getattr(ml_dtypes, ot, None) or ot)])
    if ot in ("int8", "int4") and r.random() < 0.5:
        kw["symmetric"] = r.choice([True, 1])
    if r.random() < 0.2:
        kw["num_threads"] = r.choice([1, 2, 3])
    case.base_args, case.base_kwargs = [x], dict(kw)
    case.args, case.kwargs = [_disguise(r, g, x, case, "x")], dict(kw)
    if r.random() < 0.3:
        dt = np.dtype(ot) if ot in ("uint8", "int8") else np.dtype(getattr(ml_dtypes, ot))
        case.kwargs["out"] = _guarded(r, shape, dt, case)
    if r.random() < 0.4:
        case.valid = False
        k = r.choice(["axis", "block_size", "output_dtype", "symmetric", "x", "num_threads"])
        case.notes.append(f"break:{k}")
        if k == "x":
            case.args[0] = r.choice(GARBAGE + [_huge_array(r), np.zeros((0, 3), F32)])
            case.huge = True
        elif k == "output_dtype":
            case.kwargs[k] = r.choice(DTYPE_SPECS)
        elif k == "symmetric":
            case.kwargs[k] = r.choice([2, "yes", None, [], True])
        else:
            case.kwargs[k] = r.choice(WEIRD_INTS + WEIRD_NONINTS)
    case.args[0] = _tensorize(r, case.args[0], case, "x")
    return case


_MX_ELEMS = ["fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8"]


def gen_mx(r, g, case):
    """AMD Quark's MX / BFP fake quantization and quantize_mx."""
    shape = gen_shape(r, lo=1)
    if not shape:
        shape = (r.randint(1, 40),)
    x = gen_floats(g, shape, r.choice([F32, F32, F16]), special=r.choice([0, 0.05, 0.5]))
    rank = len(shape)
    fn = r.choice(["mx", "bfp", "qmx"])
    axis = r.randint(-rank, rank - 1)
    d = shape[axis % rank]
    bs = r.choice([1, 2, 8, 32, d, d + 3])
    if fn == "mx":
        kw = dict(element_dtype=r.choice(_MX_ELEMS), axis=axis, block_size=bs,
                  rounding_mode=r.choice([0, 1, 2]))
    elif fn == "bfp":
        sub = r.choice([1, 2, 4])
        kw = dict(bfp_method=r.choice(["to_bfp", "to_bfp_prime"]), axis=axis,
                  bit_width=r.randint(10, 32), block_size=bs * sub, rounding_mode=r.choice([0, 1, 2]),
                  sub_block_size=sub, sub_block_shift_bits=r.randint(0, 3),
                  convert_to_bfloat_before_bfp=r.choice([0, 1]))
    else:
        x = x.astype(F32)
        kw = dict(element_dtype=r.choice(_MX_ELEMS + ["float8_e4m3fn", "float4_e2m1fn"]),
                  axis=axis, block_size=bs)
    if r.random() < 0.2 and fn != "qmx":
        kw["num_threads"] = r.choice([1, 2])
    case.mx = fn
    case.base_args, case.base_kwargs = [x], dict(kw)
    case.args, case.kwargs = [_disguise(r, g, x, case, "x")], dict(kw)
    if r.random() < 0.35:
        case.valid = False
        k = r.choice(list(kw) + ["x"])
        case.notes.append(f"break:{k}")
        if k == "x":
            case.args[0] = r.choice(GARBAGE + [_huge_array(r), np.zeros((), F32)])
            case.huge = True
        else:
            case.kwargs[k] = r.choice(WEIRD_INTS + WEIRD_NONINTS + DTYPE_SPECS[:12])
    case.args[0] = _tensorize(r, case.args[0], case, "x")
    return case


def _call_mx(case, args, kwargs):
    from qsimd import quark
    fn = {"mx": quark.mx_quantize_dequantize, "bfp": quark.bfp_quantize_dequantize,
          "qmx": quark.quantize_mx}[case.mx]
    return fn(*args, **kwargs)


def gen_onnx(r, g, case):
    """A small QDQ model, maybe mutated or corrupted, given as a ModelProto, bytes or a path.
    Not under ASan: qsimd.onnx is Python, and the sanitized campaign's time is for the C."""
    try:
        if os.environ.get("QSIMD_UNDER_ASAN"):
            raise ImportError
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        case.op = "cfg"
        case.args, case.valid = ["set_num_threads", 1], True
        return case
    opset = r.choice([10, 13, 19, 21, 23, 25, 28])
    ot = r.choice([np.uint8, np.int8] + ([np.int16, ml_dtypes.int4] if opset >= 21 else []))
    per_axis = opset >= 13 and r.random() < 0.4
    n = 4
    s = (np.abs(g.standard_normal(n if per_axis else ())) + 0.01).astype(np.float32)
    zmin, zmax = INT_OUT[np.dtype(ot)]
    z = g.integers(zmin, zmax + 1, s.shape).astype(ot)
    inits = [numpy_helper.from_array(s, "s"), numpy_helper.from_array(z, "z")]
    attrs = {"axis": 1} if per_axis else {}
    nodes = [helper.make_node("QuantizeLinear", ["X", "s", "z"], ["q"], **attrs),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["h"], **attrs),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["q2"], **attrs),
             helper.make_node("DequantizeLinear", ["q2", "s", "z"], ["Y"], **attrs)]
    gr = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                      [3, n])],
                           [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, n])],
                           inits)
    m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", opset)],
                          ir_version=10 if opset >= 21 else 8)
    case.onnx_params = (s, z, attrs)
    if r.random() < 0.5:
        case.valid = False
        k = r.choice(["drop-input", "dup-output", "dtype", "drop-init", "attr", "opset", "node",
                      "truncate", "flip", "garbage", "no-scale", "empty-name"])
        case.notes.append(f"mutate:{k}")
        nd = m.graph.node[r.randrange(len(m.graph.node))]
        if k == "drop-input":
            del nd.input[r.randrange(len(nd.input)):]
        elif k == "dup-output":
            nd.output[0] = r.choice(["q", "h", "Y", "X"])
        elif k == "dtype":
            m.graph.initializer[r.randrange(2)].data_type = r.choice([0, 7, 11, 99, 2**20, 8])
        elif k == "drop-init":
            del m.graph.initializer[r.randrange(2)]
        elif k == "attr":
            nd.attribute.append(helper.make_attribute(
                r.choice(["axis", "block_size", "saturate", "mode", "output_dtype"]),
                r.choice([7, -9, 2**40, 1.5, "s", [1, 2]])))
        elif k == "opset":
            m.opset_import[0].version = r.choice([0, 1, 9, 29, 10**6, -1])
        elif k == "node":
            m.graph.node.append(helper.make_node(r.choice(["Relu", "QuantizeLinear", "Foo"]),
                                                 [r.choice(["X", "Y", "q", "nowhere"])],
                                                 [r.choice(["Z", "q", "Y"])]))
        elif k == "no-scale":
            del nd.input[1:]
        elif k == "empty-name":
            nd.input[0] = ""
        data = m.SerializeToString()
        if k == "truncate":
            m = data[: r.randrange(len(data))]
        elif k == "flip":
            b = bytearray(data)
            for _ in range(r.randint(1, 8)):
                b[r.randrange(len(b))] = r.randrange(256)
            m = bytes(b)
        elif k == "garbage":
            m = r.choice([None, 42, "no/such/file.onnx", b"", "", object(), [data]])
    if isinstance(m, onnx.ModelProto) and r.random() < 0.3:
        m = m.SerializeToString()
    case.args = [m]
    case.kwargs = {}
    if r.random() < 0.3:
        case.kwargs[r.choice(["inputs", "outputs"])] = r.choice(
            [[], ["X"], ["Y"], ["X", "X"], ["nope"], "X", [1], None, 5])
        case.valid = False
    case.fn = r.choice(["boundary", "split_boundary"])
    if case.fn == "boundary":
        case.kwargs = {}
    return case


def _run_onnx(case):
    import qsimd.onnx as qonnx
    fn = getattr(qonnx, case.fn)
    try:
        res = fn(*case.args, **case.kwargs)
    except OK_ERRORS + (MemoryError,) as e:
        if not str(e).strip():
            raise Fail(f"{type(e).__name__} with an empty message\n{case.describe()}") from e
        if case.valid:
            raise Fail(f"a valid model raised {type(e).__name__}: {e}\n{case.describe()}") from e
        return "error"
    except Exception as e:   # noqa: BLE001 - any other type is a bug
        raise Fail(f"unexpected {type(e).__name__}: {e}\n{case.describe()}") from e
    if not case.valid:
        return "ok-broken"
    s, z, attrs = case.onnx_params
    ops = [e.op for e in res] if case.fn == "boundary" else \
        list(res[1].values()) + list(res[2].values())
    if len(ops) != 2:
        raise Fail(f"a valid model gave {len(ops)} boundary operators\n{case.describe()}")
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    for op in ops:
        if isinstance(op, qsimd.Quantizer):
            _same_bits(op(x), qsimd.quantize_linear(x, s, z, **attrs), "onnx Quantizer", case)
        else:
            q = qsimd.quantize_linear(x, s, z, **attrs)
            _same_bits(op(q), qsimd.dequantize_linear(q, s, z, **attrs), "onnx Dequantizer",
                       case)
    return "ok"


def _outcome(fn):
    """(result, None) or (None, the exception): only TypeError / ValueError / MemoryError may
    escape a public function."""
    try:
        return fn(), None
    except OK_ERRORS + (MemoryError,) as e:
        return None, e
    except Exception as e:   # noqa: BLE001
        raise Fail(f"unexpected {type(e).__name__}: {e}") from e


def _snapshot(y):
    """A result's values, kept before the next call writes into the same out=."""
    if isinstance(y, qsimd.PackedTensor):
        y = y.data
    b = _base(y)
    return np.array(b if isinstance(b, np.ndarray) else y, copy=True)


def _run_prep(case):
    """The prepared operator against the plain function, with the same arguments (the same
    out=, written twice): the same acceptance (the same exception type) and the same bits."""
    kind = case.prep
    x, scale, zp = case.args
    kw = case.kwargs
    plain = qsimd.quantize_linear if kind == "q" else qsimd.dequantize_linear
    cls = qsimd.Quantizer if kind == "q" else qsimd.Dequantizer
    ckw = {k: v for k, v in kw.items() if k != "out"}
    want, werr = _outcome(lambda: _snapshot(plain(x, scale, zp, **kw)))

    def prepared():
        op = cls(scale, zp, **ckw)
        y = op(x, out=kw["out"]) if "out" in kw else op(x)
        if kw.get("out") is not None and \
                (y.data if isinstance(y, qsimd.PackedTensor) else y) is not kw["out"]:
            raise Fail(f"the prepared call did not return out=\n{case.describe()}")
        return _snapshot(y)
    got, gerr = _outcome(prepared)
    case.calls += 2
    # a prepared operator copies its parameters before any x says how many it may have: an
    # impossible broadcast zero point is its MemoryError where the plain call's ValueError
    kinds = {next(k for k in (TypeError, ValueError, MemoryError) if isinstance(e, k))
             for e in (werr, gerr) if e is not None}
    # with two arguments broken, the first one checked decides the type: a prepared operator
    # checks its parameters before x and out= exist
    several = sum(n.startswith("break:") for n in case.notes) > 1
    same = werr is None or len(kinds) == 1 or several or (
        case.huge and kinds == {ValueError, MemoryError})
    if (werr is None) != (gerr is None) or not same:
        raise Fail(f"prepared vs plain: {type(gerr).__name__ if gerr else 'ok'} "
                   f"({gerr}) against {type(werr).__name__ if werr else 'ok'} ({werr})\n"
                   f"{case.describe()}")
    for e in (werr, gerr):
        if e is not None and not str(e).strip():
            raise Fail(f"{type(e).__name__} with an empty message\n{case.describe()}")
        if isinstance(e, MemoryError) and not case.huge:
            raise Fail(f"MemoryError without a huge size: {e}\n{case.describe()}")
    if werr is not None:
        return "error"
    _same_bits(got, want, "prepared vs plain", case)
    return "ok" if case.valid else "ok-broken"


def gen_case(r) -> Case:
    g = _np_rng(r)
    op = r.choice(["q", "q", "q", "dq", "dq", "dqp", "dyn", "pack", "unpack", "cfg",
                   "prep", "dynq", "mx", "onnx"])
    case = Case(op)
    case.isa = r.choice(qsimd.available_isas())
    # the plain call of a valid case runs on another instruction set: the same bits
    case.base_isa = r.choice(qsimd.available_isas())
    if op == "prep":
        return gen_prep(r, g, case, r.choice(["q", "dq"]))
    if op == "dynq":
        return gen_dynq(r, g, case)
    if op == "mx":
        return gen_mx(r, g, case)
    if op == "onnx":
        return gen_onnx(r, g, case)
    if op == "cfg":   # process-wide settings, valid or not; run_case restores them
        fn = r.choice(["set_isa", "set_num_threads"])
        good = qsimd.available_isas() + [None, "auto", ""] if fn == "set_isa" else [1, 2, 64]
        arg = r.choice(good) if r.random() < 0.5 else r.choice(
            GARBAGE + WEIRD_INTS + WEIRD_NONINTS + ["avx512x", "a\x00b", "\udcff", "x" * 300,
                                                    "scalar\x00", "SCALAR", "neon"])
        case.valid = any(arg is g or type(arg) in (int, str) and arg == g for g in good)
        case.args = [fn, arg]
        return case
    if op == "dyn":
        shape = gen_shape(r, lo=1)
        x = gen_floats(g, shape, F32, special=r.choice([0, 0.05, 0.5, 1.0]))
        case.base_args, case.base_kwargs = [x], {}
        case.args, case.kwargs = [_tensorize(r, _disguise(r, g, x, case, "x"), case, "x")], {}
        case.expect = (shape, np.dtype(np.uint8))
        if r.random() < 0.4:
            case.valid = False
            case.notes.append("break:x")
            k = r.random()
            if k < 0.3:
                case.args[0] = _huge_array(r)
                case.huge = True
            elif k < 0.4:
                case.args[0] = _high_rank(r, F32)
            elif k < 0.5:
                case.args[0] = np.zeros((0, 3), F32)
            else:
                case.args[0] = r.choice(GARBAGE)
        return case
    if op == "pack":
        dt = r.choice(list(SUBBYTE) + [np.dtype(ml_dtypes.float4_e2m1fn)])
        x = gen_ints(g, gen_shape(r), np.uint8, 0, 255).view(dt)
        case.base_args = [x]
        case.args = [_disguise(r, g, x, case, "a")]
        if r.random() < 0.3:
            case.valid = False
            case.args[0] = r.choice(GARBAGE)
        return case
    if op == "unpack":
        dt = r.choice(list(SUBBYTE))
        shape = gen_shape(r)
        n = -(-math.prod(shape) * SUBBYTE[dt] // 8)
        data = g.integers(0, 256, n, dtype=np.uint8)
        case.base_args = [data, dt, shape]
        t = _as_tensor(r, data, False)
        case.args = [r.choice([data, data.tobytes(), bytearray(data.tobytes()),
                               data.view(np.int8), data if t is None else t]),
                     r.choice([dt, dt.name]), shape]
        if r.random() < 0.4:
            case.valid = False
            i = r.randrange(3)
            case.args[i] = r.choice([GARBAGE, DTYPE_SPECS, [(2**62, 4), (-1,), 5, (2**64,),
                                                           (1,) * 70, (0, 2**63)]][i])
            case.huge = True   # a shape may ask for an impossible array
        return case

    if op == "q":
        x, scale, zp, kw = gen_quantize(r, g, case)
    else:
        x, scale, zp, kw = gen_dequantize(r, g, case, packed_input=op == "dqp")
    # disguises that keep the call's meaning
    if op != "dqp":
        # Python data: floats become float32, integers int32 (or the zero point's type)
        if r.random() < 0.1 and _listify_ok(x) and x.ndim and x.size < 50 and \
                (op == "q" or x.dtype == I32):
            case.notes.append("x:list")
            x = x.tolist()
        else:
            x = _disguise(r, g, x, case, "x")
    if r.random() < 0.15 and _listify_ok(scale) and scale.dtype == F32:
        case.notes.append("scale:python")
        scale = scale.tolist()
    else:
        scale = _disguise(r, g, scale, case, "scale")
    if zp is not None:
        if r.random() < 0.1 and ("output_dtype" in kw or zp.dtype == np.uint8) and \
                (zp.size or zp.ndim <= 1) and \
                zp.dtype in INT_OUT and op == "q":
            case.notes.append("zp:python")
            zp = zp.tolist()
        else:
            zp = _disguise(r, g, zp, case, "zp")
    args = [x, scale] + ([zp] if zp is not None or r.random() < 0.5 else [])
    case.args, case.kwargs = args, dict(kw)
    shape, dt = case.expect
    k = r.random()
    if k < 0.3:
        case.kwargs["out"] = _tensorize(r, _guarded(r, shape, dt, case), case, "out", True)
    elif k < 0.4:
        o = _in_place_out(r, x, shape, dt, case)
        if o is not None:
            case.kwargs["out"] = o
    case.args = [_tensorize(r, a, case, n) for a, n in zip(case.args, ("x", "scale", "zp"))]
    if r.random() < 0.5:
        for _ in range(r.choice([1, 1, 1, 2])):
            if len(case.args) < 3:
                case.args.append(None)
            _break(r, g, case, op)
    return case


# ---------------------------------------------------------------------- running and checking
def _call(op, args, kwargs, case=None):
    if op == "dynq":
        return qsimd.dynamic_quantize(*args, **kwargs)
    if op == "mx":
        return _call_mx(case, args, kwargs)
    if op == "cfg":
        isa, threads = qsimd.get_isa(), qsimd.get_num_threads()
        try:
            return getattr(qsimd, args[0])(args[1])
        finally:   # leave the process as it was for the next case
            qsimd.set_isa(None if isa == qsimd.available_isas()[-1] else isa)
            qsimd.set_num_threads(threads)
    if op == "q":
        return qsimd.quantize_linear(*args, **kwargs)
    if op in ("dq", "dqp"):
        return qsimd.dequantize_linear(*args, **kwargs)
    if op == "dyn":
        return qsimd.dynamic_quantize_linear(*args, **kwargs)
    if op == "pack":
        return qsimd.pack(*args, **kwargs)
    return qsimd.unpack(*args, **kwargs)


def _arrays(values):
    for v in values:
        v = _base(v)
        if isinstance(v, np.ndarray):
            yield v
        elif isinstance(v, qsimd.PackedTensor) and isinstance(v.data, np.ndarray):
            yield v.data


def _copy(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, qsimd.PackedTensor):
        return qsimd.PackedTensor(_copy(v.data), v.dtype, v.shape)
    return v


def _same_bits(a, b, what, case):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        raise Fail(f"{what}: {a.dtype}{a.shape} != {b.dtype}{b.shape}\n{case.describe()}")
    if a.dtype in FLOAT_OUT:   # any NaN equals any NaN (payloads are not specified)
        an, bn = np.isnan(a.astype(F32)), np.isnan(b.astype(F32))
        if (an != bn).any():
            raise Fail(f"{what}: NaN positions differ\n{case.describe()}")
        a, b = np.where(an, np.zeros((), a.dtype), a), np.where(bn, np.zeros((), b.dtype), b)
    ra = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    rb = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
    if not np.array_equal(ra, rb):
        fa, fb = np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1)
        bad = np.flatnonzero((ra.reshape(fa.size, -1) != rb.reshape(fb.size, -1)).any(axis=1))[:6]
        raise Fail(f"{what}: {bad.size}+ values differ at {bad}: got {fa[bad]} want "
                   f"{fb[bad]}\n{case.describe()}")


def _expand(v, shape, axis, bs):
    """scale / zero point broadcast to x's shape (per-tensor, per-axis or blocked)."""
    v = np.asarray(v)
    if v.size == 1:
        return np.broadcast_to(v.reshape(()), shape)
    a = axis % len(shape)
    if bs == 0:
        return np.broadcast_to(v.reshape((-1,) + (1,) * (len(shape) - a - 1)), shape)
    return np.repeat(v, bs, axis=a)[(slice(None),) * a + (slice(0, shape[a]),)]


def _oracle(case, y):
    kind = case.oracle[0]
    if kind == "q":
        _, x, s, zp, axis, bs, ot, prec, packed = case.oracle
        if prec not in (None, 0) or (x.dtype == s.dtype and x.dtype in (F16, BF16)):
            return   # float16/bfloat16 quotients: covered by the ONNX differential tests
        if x.size == 0:
            return
        sf = _expand(s, x.shape, axis, bs)
        zf = _expand(zp, x.shape, axis, bs).astype(np.float64) if zp is not None else 0.0
        with np.errstate(all="ignore"):
            if x.dtype == I32 or s.dtype == I32:
                q = x.astype(F64) / sf.astype(F64)
            else:
                q = (x.astype(F32) / sf.astype(F32)).astype(F64)
            rq = np.rint(q) + zf
        qmin, qmax = INT_OUT[ot]
        want = np.where(np.isnan(rq), qmin, np.clip(rq, qmin, qmax)).astype(np.int64)
        got = (qsimd.unpack(y, ot, x.shape) if packed else y).astype(np.int64)
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))[:5]
            raise Fail(f"oracle: quantize differs at {bad}: got {got.reshape(-1)[bad]} want "
                       f"{want.reshape(-1)[bad]}\n{case.describe()}")
    elif kind == "dq":
        _, x, s, zp, axis, bs, yt = case.oracle
        if x.size == 0:
            return
        sf = _expand(s, x.shape, axis, bs).astype(F32)
        zf = _expand(zp, x.shape, axis, bs).astype(np.int64) if zp is not None else 0
        with np.errstate(all="ignore"):
            want = ((x.astype(np.int64) - zf).astype(F32) * sf).astype(yt)
        _same_bits(y, want, "oracle: dequantize", case)


def run_case(case: Case):
    """Runs one case; raises Fail (with the case described) when a rule is broken."""
    if case.op in ("prep", "onnx"):
        if case.isa is not None and qsimd.get_isa() != case.isa:
            qsimd.set_isa(case.isa)
        return _run_prep(case) if case.op == "prep" else _run_onnx(case)
    inputs = list(_arrays(case.args))
    out_obj = case.kwargs.get("out")
    out = _base(out_obj) if isinstance(_base(out_obj), np.ndarray) else None
    kept = [(a, a.tobytes()) for a in inputs
            if a.size < 10**6 and not (out is not None and np.may_share_memory(a, out))]
    want = None
    if case.valid and case.op != "cfg":   # first: an `out` overlapping x overwrites x
        qsimd.set_isa(getattr(case, "base_isa", None) or case.isa)
        want = _call(case.op, case.base_args, case.base_kwargs, case)
        case.calls += 1
    if case.isa is not None and qsimd.get_isa() != case.isa:
        qsimd.set_isa(case.isa)
    raised = False
    case.calls += 1
    try:
        y = _call(case.op, case.args, case.kwargs, case)
    except OK_ERRORS + (MemoryError,) as e:
        raised = True
        if isinstance(e, MemoryError) and not case.huge:
            raise Fail(f"MemoryError without a huge size: {e}\n{case.describe()}") from e
        if not str(e).strip():
            raise Fail(f"{type(e).__name__} with an empty message\n{case.describe()}") from e
        if case.valid:
            raise Fail(f"a valid call raised {type(e).__name__}: {e}\n{case.describe()}") from e
        y = None
    except Fail:
        raise
    except Exception as e:   # any other exception type is a bug
        raise Fail(f"unexpected {type(e).__name__}: {e}\n{case.describe()}") from e
    if isinstance(y, qsimd.PackedTensor):   # packed=True: the fields, then only the bytes
        if case.valid and case.oracle[0] == "q":
            x0, ot = case.oracle[1], case.oracle[6]
            if tuple(y.shape) != x0.shape or np.dtype(y.dtype) != np.dtype(ot):
                raise Fail(f"PackedTensor fields {y.dtype}{y.shape} != {ot}{x0.shape}\n"
                           f"{case.describe()}")
        y = y.data
    if isinstance(want, qsimd.PackedTensor):
        want = want.data
    for a, before in kept:
        if a.tobytes() != before:
            raise Fail(f"an input array was modified\n{case.describe()}")
    if case.out_guard is not None:
        buf, canary, mask = case.out_guard
        if not np.array_equal(buf[~mask], canary[~mask]):
            raise Fail(f"bytes outside out= were written\n{case.describe()}")
    if raised:
        return "error"
    if case.op == "cfg":
        if y is not None:
            raise Fail(f"{case.args[0]} returned {y!r}\n{case.describe()}")
        return "ok" if case.valid else "ok-broken"
    if out is not None:
        if (y[0] if case.op in ("dyn", "dynq", "mx") and isinstance(y, tuple) else y) \
                is not out_obj:
            raise Fail(f"result is not the out= array\n{case.describe()}")
        y = (out,) + tuple(y[1:]) if isinstance(y, tuple) else out
    if not case.valid:
        _check_meta(case, y)
        return "ok-broken"
    # a valid call: the plain call gives the same bits, and the oracle agrees
    if case.op in ("dynq", "mx"):
        ys = y if isinstance(y, tuple) else (y,)
        ws = want if isinstance(want, tuple) else (want,)
        for i, (got_part, want_part) in enumerate(zip(ys, ws)):
            _same_bits(got_part, want_part, f"{case.op} part {i} vs plain call", case)
        return "ok"
    if case.op == "dyn":
        for got_part, want_part, what in zip(y, want, ("y", "scale", "zero_point")):
            _same_bits(got_part, want_part, f"dynamic {what} vs plain call", case)
        if y[0].shape != case.expect[0] or y[0].dtype != np.uint8:
            raise Fail(f"dynamic: shape/dtype\n{case.describe()}")
        return "ok"
    _same_bits(y, want, "result vs plain call", case)
    if case.op in ("pack", "unpack"):
        return "ok"
    _check_meta(case, y)
    _oracle(case, y)
    return "ok"


def _check_meta(case, y):
    if case.op in ("q", "dq", "dqp") and case.valid:
        shape, dt = case.expect
        if y.shape != tuple(shape) or y.dtype != dt:
            raise Fail(f"result {y.dtype}{y.shape} != expected {dt}{tuple(shape)}\n"
                       f"{case.describe()}")
    if not isinstance(y, (np.ndarray, tuple)):
        raise Fail(f"result of type {type(y).__name__}\n{case.describe()}")


def campaign(calls: int, seed: int, report_every: float = 10.0) -> int:
    """Runs cases until `calls` API calls have been made (a valid case makes two: the
    disguised call and the plain one); returns 1 on the first broken rule, else 0."""
    r = random.Random(seed)
    faulthandler.enable()
    counts = {"ok": 0, "ok-broken": 0, "error": 0}
    start = last = time.time()
    slowest = (0.0, "")
    previous = qsimd.get_isa()
    made = cases = 0
    try:
        while made < calls:
            case_seed = r.getrandbits(64)
            case = gen_case(random.Random(case_seed))
            if cases % 500 == 0:   # a hang fails the campaign (re-armed rarely: costs ~1 ms)
                faulthandler.dump_traceback_later(300, exit=True)
            t0 = time.time()
            try:
                counts[run_case(case)] += 1
            except Fail as e:
                print(f"FAIL at case {cases} (replay: --replay {case_seed}):\n{e}", flush=True)
                return 1
            dt = time.time() - t0
            made += max(case.calls, 1)
            cases += 1
            if dt > slowest[0]:
                slowest = (dt, case.describe()[:160])
            if time.time() - last > report_every:
                last = time.time()
                print(f"  {made} calls, {made / (last - start):.0f}/s", flush=True)
    finally:
        faulthandler.cancel_dump_traceback_later()
        qsimd.set_isa(None if previous == qsimd.available_isas()[-1] else previous)
    took = time.time() - start
    print(f"python API fuzz: {made} calls ({cases} cases) in {took:.1f} s, seed {seed}: "
          f"{counts['ok']} valid cases checked against the plain call and oracle, "
          f"{counts['ok-broken']} broken cases accepted, {counts['error']} clean errors; "
          f"slowest case {slowest[0] * 1e3:.0f} ms")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--replay", type=int, default=None, help="run one case by its seed")
    a = p.parse_args(argv)
    if a.replay is not None:
        case = gen_case(random.Random(a.replay))
        print(case.describe())
        print(run_case(case))
        return 0
    seed = a.seed if a.seed is not None else random.SystemRandom().getrandbits(32)
    return campaign(a.calls, seed)


if __name__ == "__main__":
    sys.exit(main())
