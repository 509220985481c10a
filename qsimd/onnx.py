"""The quantized boundary of an ONNX model (needs only the `onnx` package: ``qsimd[onnx]``).

A QDQ model quantizes its float inputs with QuantizeLinear nodes and dequantizes its outputs
with DequantizeLinear nodes. `boundary(model)` lists those whose parameters are constants,
each with a ready `qsimd.Quantizer` / `qsimd.Dequantizer`; `split_boundary(model)` removes
them, so a server quantizes requests with qsimd before the runtime (and dequantizes after):

    core, quantizers, dequantizers = qsimd.onnx.split_boundary("model_qdq.onnx")
    y_q = session(core).run(None, {n: q(feeds[n]) for n, q in quantizers.items()})
    outputs = {n: dequantizers[n](v) for n, v in zip(output_names, y_q)}

The core model keeps the input and output names; their types become the quantized types.
A model is a path, an ``onnx.ModelProto`` or its serialized bytes; one that cannot be read, is
malformed or is invalid is a ValueError saying what is wrong.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ._api import Dequantizer, Quantizer
from ._dtypes import DTYPE_TO_CODE

__all__ = ["BoundaryEntry", "ChainQuantizer", "boundary", "split_boundary"]

_DOMAINS = ("", "ai.onnx")
# attributes each operator may carry (opsets 10 to 28: 28 only adds the float6 types)
_Q_ATTRS = {"axis", "block_size", "output_dtype", "saturate", "precision"}
_DQ_ATTRS = {"axis", "block_size", "output_dtype"}
_MAX_OPSET = 28


@dataclass(frozen=True)
class BoundaryEntry:
    """A graph input quantized by `node` (kind "input", `op` a Quantizer) or a graph output
    dequantized by `node` (kind "output", `op` a Dequantizer)."""
    name: str
    kind: str
    node: onnx.NodeProto
    op: object

    def __repr__(self):
        return f"BoundaryEntry({self.name!r}, {self.kind!r}, {self.node.op_type}, {self.op!r})"


def _why(e: BaseException) -> str:
    """An exception's message, first line only (some carry long C++ traces)."""
    msg = str(e).strip().split("\n", 1)[0]
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _load(model) -> onnx.ModelProto:
    """A ModelProto from a ModelProto, serialized bytes or a path (str / os.PathLike)."""
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        m = onnx.ModelProto()
        try:
            m.ParseFromString(bytes(model))
        except Exception as e:   # noqa: BLE001 - protobuf's DecodeError and kin
            raise ValueError(f"model: the bytes are not a serialized ONNX model ({_why(e)})") \
                from None
        return m
    if isinstance(model, (str, os.PathLike)):
        try:
            path = os.fsdecode(os.fspath(model))
        except (TypeError, ValueError) as e:
            raise TypeError(f"model: {model!r} is not a path ({_why(e)})") from None
        try:
            return onnx.load(path)
        except OSError as e:   # a missing file, or a missing external-data file
            raise ValueError(f"model: cannot read {path!r} or its external data "
                             f"({_why(e)})") from None
        except Exception as e:   # noqa: BLE001 - DecodeError, onnx's ValidationError, ...
            raise ValueError(f"model: {path!r} is not a readable ONNX model ({_why(e)})") \
                from None
    raise TypeError(f"model must be an onnx.ModelProto, its serialized bytes or a path, got "
                    f"{type(model).__name__}")


def _opset(m: onnx.ModelProto) -> int:
    for o in m.opset_import:
        if o.domain in _DOMAINS:
            return o.version
    raise ValueError("the model imports no default ONNX opset")


def _constants(g: onnx.GraphProto) -> dict:
    """Name -> where the value of every constant is: initializers that are not also graph
    inputs (those can be overridden at run time) and outputs of Constant nodes. Read only when
    a boundary node uses them (_value): a tensor of a type NumPy cannot hold elsewhere in the
    model is no concern here."""
    inputs = {i.name for i in g.input}
    out = {t.name: t for t in g.initializer if t.name not in inputs}
    for n in g.node:
        if n.op_type != "Constant" or n.domain not in _DOMAINS or len(n.output) != 1:
            continue
        for a in n.attribute:
            if a.name in ("value", "value_float", "value_floats", "value_int", "value_ints"):
                out[n.output[0]] = a
    return out


def _value(c) -> np.ndarray:
    """The array of a constant from _constants."""
    if isinstance(c, onnx.TensorProto):
        return numpy_helper.to_array(c)
    if c.name == "value":
        return numpy_helper.to_array(c.t)
    if c.name == "value_float":
        return np.array(c.f, np.float32)
    if c.name == "value_floats":
        return np.array(list(c.floats), np.float32)
    if c.name == "value_int":
        return np.array(c.i, np.int64)
    return np.array(list(c.ints), np.int64)


def _attrs(node, allowed, opset):
    """The node's attributes as Python values; ValueError for one qsimd does not know."""
    out = {}
    for a in node.attribute:
        if a.name not in allowed:
            raise ValueError(f"attribute {a.name!r} of {node.op_type} is not supported")
        out[a.name] = helper.get_attribute_value(a)
    if "axis" not in out and opset < 13:
        out["axis"] = 1
    return out


def _params(node, consts):
    """(scale, zero point or None) of a Q/DQ node, both constants; ValueError naming the
    tensor that is not, or cannot be read."""
    names = list(node.input[1:3])
    if not names or names[0] == "":
        raise ValueError(f"{node.op_type} {node.name!r} has no scale input")
    vals = []
    for i, nm in enumerate(names):
        if i == 1 and nm == "":
            vals.append(None)
            continue
        what = "scale" if i == 0 else "zero point"
        if nm not in consts:
            raise ValueError(f"the {what} {nm!r} of {node.op_type} {node.name!r} is not a "
                             f"constant (an initializer or a Constant node)")
        try:
            vals.append(_value(consts[nm]))
        except Exception as e:   # noqa: BLE001 - an unknown data type, bad raw data, ...
            raise ValueError(f"the {what} {nm!r} of {node.op_type} {node.name!r} cannot be "
                             f"read ({_why(e)})") from None
    if len(vals) == 1:
        vals.append(None)
    return vals[0], vals[1]


def _make_quantizer(node, consts, opset, chain=None):
    a = _attrs(node, _Q_ATTRS, opset)
    scale, zp = _params(node, consts)
    prec = a.get("precision") or None
    if chain is not None and chain[3] is not None:
        return _make_chain_quantizer(node, consts, opset, chain)
    kw = {} if chain is None else dict(pre=chain[0], pre_axis=chain[1], perm=chain[2])
    return Quantizer(scale, zp, axis=a.get("axis", 1), block_size=a.get("block_size", 0),
                     output_dtype=a.get("output_dtype") or None,
                     saturate=bool(a.get("saturate", 1)), precision=prec, **kw)


# graph input types a preprocessing chain reads (ONNX codes): float32, uint8, int8, uint16,
# int16, float16, bfloat16
_CHAIN_INPUTS = {1, 2, 3, 4, 5, 10, 16}
_CHAIN_OPS = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div"}


_SHAPE_OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")


class _Layout:
    """Where a chain's current tensor lives in x: x is cut into atoms (each axis of x one atom,
    or several where a reshape split it; unit atoms where one added an axis), kept in x's order
    in `xorder`; each axis of the current tensor is a run of atoms (`cur`). A reshape regroups
    the atoms in the current order, a transpose permutes the runs. At the end the quantizer
    reads x reshaped to its atoms, transposed to the current atom order, and the result is
    reshaped to the QuantizeLinear input's shape: every step a free view of C-contiguous
    memory."""

    def __init__(self, dims):
        self.dims = tuple(dims)            # x's
        self.ext = list(dims)              # atom extents (None: not known before the call)
        self.xaxis = list(range(len(dims)))  # the x axis each atom cuts (None: an added unit)
        self.xorder = list(range(len(dims)))
        self.cur = [[i] for i in range(len(dims))]
        self.reshaped = False

    def _new(self, e, after=None, xaxis=None):
        self.ext.append(e)
        self.xaxis.append(xaxis)
        a = len(self.ext) - 1
        self.xorder.insert(len(self.xorder) if after is None else self.xorder.index(after) + 1, a)
        return a

    def extents(self):
        """The current tensor's dims (None: unknown)."""
        out = []
        for g in self.cur:
            e = 1
            for a in g:
                e = None if e is None or self.ext[a] is None else e * self.ext[a]
            out.append(e)
        return out

    def regroup(self, target):
        """Reshape to `target` (known dims); False when the atoms cannot express it."""
        seq = [a for g in self.cur for a in g if self.ext[a] != 1]
        if any(self.ext[a] is None for a in seq):
            return False
        new, i = [], 0
        for t in target:
            g, p = [], 1
            while p < t:
                if i == len(seq):
                    return False
                a = seq[i]
                if p * self.ext[a] <= t:
                    g.append(a)
                    p *= self.ext[a]
                    i += 1
                    continue
                if t % p or self.ext[a] % (t // p):   # split the atom: outer part first
                    return False
                f = t // p
                seq[i] = self._new(self.ext[a] // f, after=a, xaxis=self.xaxis[a])
                self.ext[a] = f
                g.append(a)
                p *= f
            if p != t:
                return False
            new.append(g or [self._new(1)])
        if i != len(seq):
            return False
        self.cur = new
        self.reshaped = True
        return True

    def the_atom(self, axis):
        """The one atom of the current axis that is not a unit (its index), or None."""
        big = [a for a in self.cur[axis] if self.ext[a] != 1]
        return big[0] if len(big) == 1 else (self.cur[axis][0] if not big else None)

    def perm(self):
        """The quantizer's perm over x's atoms: units no axis holds first, then the current
        order."""
        held = [a for g in self.cur for a in g]
        order = [a for a in self.xorder if a not in held] + held
        return tuple(self.xorder.index(a) for a in order), order


def _shape_op(n, attrs, lay, consts, opset):
    """Apply Reshape / Flatten / Squeeze / Unsqueeze node n to lay; a reason when it cannot."""
    dims = lay.extents()
    rank = len(dims)
    what = f"{n.op_type} {n.name!r}"
    if n.op_type in ("Squeeze", "Unsqueeze"):
        if opset >= 13:
            if len(n.input) < 2 or n.input[1] == "":
                axes = None
            elif n.input[1] in consts:
                axes = [int(v) for v in _value(consts[n.input[1]]).reshape(-1)]
            else:
                return f"{what} has axes that are not a constant"
        else:
            axes = attrs.get("axes")
        if n.op_type == "Unsqueeze":
            if axes is None:
                return f"{what} has no axes"
            r = rank + len(axes)
            axes = sorted(a + r if a < 0 else a for a in axes)
            if len(set(axes)) != len(axes) or not all(0 <= a < r for a in axes):
                return f"{what} has bad axes"
            for a in axes:
                lay.cur.insert(a, [lay._new(1)])
        else:
            if axes is None:
                if None in dims:
                    return f"{what} squeezes axes of unknown size"
                axes = [j for j, d in enumerate(dims) if d == 1]
            axes = sorted({a + rank if a < 0 else a for a in axes})
            if not all(0 <= a < rank and dims[a] == 1 for a in axes):
                return f"{what} squeezes an axis that is not of size 1"
            lay.cur = [g for j, g in enumerate(lay.cur) if j not in axes]
        lay.reshaped = True
        return None
    if None in dims:
        return f"{what} needs the input's shape, which is not static"
    total = math.prod(dims)
    if n.op_type == "Flatten":
        ax = attrs.get("axis", 1)
        ax = ax + rank if isinstance(ax, int) and ax < 0 else ax
        if not isinstance(ax, int) or not 0 <= ax <= rank:
            return f"{what} has a bad axis"
        target = [math.prod(dims[:ax]), math.prod(dims[ax:])]
    else:
        if len(n.input) != 2 or n.input[1] not in consts:
            return f"{what} has a shape that is not a constant"
        target = [int(v) for v in _value(consts[n.input[1]]).reshape(-1)]
        if not attrs.get("allowzero", 0):
            target = [dims[j] if v == 0 and j < rank else v for j, v in enumerate(target)]
        if target.count(-1) == 1:
            rest = math.prod(v for v in target if v != -1)
            if rest <= 0 or total % rest:
                return f"{what} has a shape that does not fit"
            target[target.index(-1)] = total // rest
        if any(v < 0 for v in target) or math.prod(target) != total:
            return f"{what} has a shape that does not fit"
    if not lay.regroup(target):
        return f"{what} splits or merges axes a transpose has separated"
    return None


def _follow_chain(inp, consumers, consts, outputs, opset=17):
    """From graph input `inp`, the nodes of a chain of Cast (to float32), Add / Sub / Mul / Div
    with a constant, Transpose and Reshape / Flatten / Squeeze / Unsqueeze (constant shapes)
    ending in a QuantizeLinear, each intermediate tensor feeding only the next node: (chain
    nodes, the QuantizeLinear, (pre, pre_axis, perm, layout) or None, reason or None); layout
    is None without shape operations, else the _Layout. (None, None, None, None) when no
    QuantizeLinear ends a chain."""
    tt = inp.type.tensor_type
    dtype = tt.elem_type
    rank = len(tt.shape.dim) if tt.HasField("shape") else None
    cur, nodes = inp.name, []
    while True:
        users = consumers.get(cur, [])
        if len(users) != 1 or (nodes and cur in outputs):
            return None, None, None, None
        n = users[0]
        if n.domain not in _DOMAINS:
            return None, None, None, None
        if n.op_type == "QuantizeLinear" and n.input and n.input[0] == cur:
            break
        if n.op_type not in ("Cast", "Transpose", *_CHAIN_OPS, *_SHAPE_OPS) or \
                len(n.output) != 1:
            return None, None, None, None
        nodes.append(n)
        cur = n.output[0]
    if not nodes:
        return [], n, None, None
    q = n
    if inp.name in outputs:
        return nodes, q, None, f"input {inp.name!r} is also a graph output"
    if rank is None:
        return nodes, q, None, f"the rank of input {inp.name!r} is unknown"
    if dtype not in _CHAIN_INPUTS:
        return nodes, q, None, f"input {inp.name!r} has a type a chain does not read"
    lay = _Layout([d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim])
    pre, pre_axis, is_float = [], None, dtype == TensorProto.FLOAT
    prev = inp.name   # the tensor the chain has reached
    for n in nodes:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        r = len(lay.cur)
        if n.op_type == "Cast":
            if attrs.get("to") != TensorProto.FLOAT or set(attrs) - {"to"}:
                return nodes, q, None, f"Cast {n.name!r} is not a cast to float32"
            is_float = True
        elif n.op_type == "Transpose":
            p = list(attrs.get("perm", range(r - 1, -1, -1)))
            if sorted(p) != list(range(r)):
                return nodes, q, None, f"Transpose {n.name!r} has a bad perm"
            lay.cur = [lay.cur[i] for i in p]
        elif n.op_type in _SHAPE_OPS:
            try:
                why = _shape_op(n, attrs, lay, consts, opset)
            except (TypeError, ValueError, IndexError, OverflowError) as e:   # malformed
                why = f"{n.op_type} {n.name!r} cannot be read ({_why(e)})"
            if why:
                return nodes, q, None, why
        else:
            if not is_float:
                return nodes, q, None, f"{n.op_type} {n.name!r} computes in the input type"
            if len(n.input) != 2:
                return nodes, q, None, f"{n.op_type} {n.name!r} does not have two inputs"
            if n.input[0] == prev and n.input[1] in consts:
                cname = n.input[1]
            elif n.op_type in ("Add", "Mul") and n.input[1] == prev and n.input[0] in consts:
                cname = n.input[0]
            else:
                return nodes, q, None, (f"{n.op_type} {n.name!r} does not take the chain "
                                        f"first and a constant second")
            c = _value(consts[cname])
            if c.dtype != np.float32 or c.ndim > r:
                return nodes, q, None, f"the constant {cname!r} of {n.op_type} {n.name!r} " \
                                       f"is not a float32 tensor broadcast to the input"
            axes = [r - c.ndim + j for j, d in enumerate(c.shape) if d != 1]
            atom = lay.the_atom(axes[0]) if len(axes) == 1 else None
            if len(axes) > 1 or (axes and atom is None):
                return nodes, q, None, f"the constant {cname!r} varies along more than one axis"
            if axes:
                xa = atom   # x's atoms are the quantizer's axes (x reshaped to them)
                if pre_axis is not None and pre_axis != xa:
                    return nodes, q, None, (f"the constant {cname!r} runs along another axis "
                                            f"than an earlier one")
                pre_axis = xa
                pre.append((_CHAIN_OPS[n.op_type], c.reshape(-1)))
            else:
                pre.append((_CHAIN_OPS[n.op_type], float(c.reshape(-1)[0])))
        prev = n.output[0]
    if not is_float:
        return nodes, q, None, f"the chain from {inp.name!r} never casts to float32"
    perm = lay.perm()[0]
    if pre_axis is not None:
        pre_axis = lay.xorder.index(pre_axis)
    if not lay.reshaped:
        return nodes, q, (pre, -1 if pre_axis is None else pre_axis, perm, None), None
    return nodes, q, (pre, -1 if pre_axis is None else pre_axis, perm, lay), None


class ChainQuantizer:
    """The quantizer of a graph input whose preprocessing chain reshapes (Reshape, Flatten,
    Squeeze, Unsqueeze): ``q(x, out=None)`` views x as the chain's atoms, runs `quantizer` (a
    Quantizer with the chain's pre / perm) and returns its result viewed in the shape of the
    QuantizeLinear's input: what the chain and the node compute in the model, bit for bit."""

    def __init__(self, quantizer, xdims, xshape, yshape):
        self.quantizer = quantizer
        self._xdims = tuple(xdims)     # the model input's dims (None: symbolic)
        self._rank = len(self._xdims)
        self._xshape = tuple(xshape)   # x's atoms: an int, or ("x", axis): that dim of x
        self._yshape = tuple(yshape)   # per result axis, the entries of its atoms
        self._perm = quantizer._args[2]["perm"] or tuple(range(len(self._xshape)))

    @property
    def output_dtype(self):
        return self.quantizer.output_dtype

    def _dims(self, shape):
        def dim(e):
            return shape[e[1]] if isinstance(e, tuple) else e
        xs = [dim(e) for e in self._xshape]
        ys = [math.prod(dim(f) for f in e) for e in self._yshape]
        return xs, ys

    def __call__(self, x, out=None):
        shape = np.shape(x)
        if len(shape) != self._rank:
            raise ValueError(f"x must have rank {self._rank} (the model's input), got "
                             f"{len(shape)}")
        if any(d is not None and d != v for d, v in zip(self._xdims, shape)):
            want = tuple("?" if d is None else d for d in self._xdims)
            raise ValueError(f"x must have the model input's shape {want}, got {shape}")
        xs, ys = self._dims(shape)
        xr = np.reshape(x, xs)
        if out is None:
            return np.reshape(self.quantizer(xr), ys)
        if np.shape(out) != tuple(ys):
            raise ValueError(f"out must have shape {tuple(ys)}, got {np.shape(out)}")
        if isinstance(out, np.ndarray) and out.flags.c_contiguous:
            self.quantizer(xr, out=out.reshape([xs[p] for p in self._perm]))   # a view
        else:
            np.copyto(out, np.reshape(self.quantizer(xr), ys))
        return out

    def _onnx_dims(self, xdims):
        """The core model's input dims (of the result) from the original input's xdims."""
        out = []
        for e in self._yshape:
            d = onnx.TensorShapeProto.Dimension()
            var = [f for f in e if isinstance(f, tuple)]
            if not var:
                d.dim_value = math.prod(e)
            elif len(var) == 1 and all(f == 1 for f in e if not isinstance(f, tuple)):
                d.CopyFrom(xdims[var[0][1]])
            out.append(d)
        return out

    def __repr__(self):
        return f"ChainQuantizer({self.quantizer!r}, {self._xdims}, {self._xshape}, " \
               f"{self._yshape})"


def _make_chain_quantizer(node, consts, opset, chain):
    """The ChainQuantizer of a chain with shape operations (chain[3], its _Layout)."""
    pre, pre_axis, perm, lay = chain
    a = _attrs(node, _Q_ATTRS, opset)
    scale, zp = _params(node, consts)
    order = lay.perm()[1]
    axis = 0
    if np.ndim(scale) > 0 and np.size(scale) > 1:
        if a.get("block_size", 0) or np.ndim(scale) != 1:
            raise ValueError("blocked quantization after a reshape is not taken")
        t = a.get("axis", 1)
        t = t + len(lay.cur) if t < 0 else t
        atom = lay.the_atom(t) if 0 <= t < len(lay.cur) else None
        if atom is None:
            raise ValueError("the quantization axis is not one axis of the input")
        axis = order.index(atom)
    prec = a.get("precision") or None
    q = Quantizer(scale, zp, axis=axis, output_dtype=a.get("output_dtype") or None,
                  saturate=bool(a.get("saturate", 1)), precision=prec, pre=pre,
                  pre_axis=pre_axis, perm=perm)

    def entry(at):
        return lay.ext[at] if lay.ext[at] is not None else ("x", lay.xaxis[at])
    return ChainQuantizer(q, lay.dims, [entry(at) for at in lay.xorder],
                          [tuple(entry(at) for at in g) for g in lay.cur])


def _make_dequantizer(node, consts, opset):
    a = _attrs(node, _DQ_ATTRS, opset)
    scale, zp = _params(node, consts)
    return Dequantizer(scale, zp, axis=a.get("axis", 1), block_size=a.get("block_size", 0),
                       output_dtype=a.get("output_dtype") or None)


def _scan(m: onnx.ModelProto):
    """Every boundary candidate: (name, kind, node, op or None, reason or None)."""
    g = m.graph
    opset = _opset(m)
    if not 10 <= opset <= _MAX_OPSET:
        raise ValueError(f"opset {opset} is outside what qsimd supports (10 to {_MAX_OPSET})")
    consts = _constants(g)
    consumers: dict = {}
    producer = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
        for o in n.output:
            if o in producer and o != "":   # "" marks an unused optional output
                raise ValueError(f"model: tensor {o!r} is the output of two nodes "
                                 f"({producer[o].op_type} {producer[o].name!r} and "
                                 f"{n.op_type} {n.name!r}); ONNX graphs assign each name once")
            producer[o] = n
    found = []
    outputs = {o.name for o in g.output}
    for inp in g.input:
        if inp.name in consts:
            continue
        users = consumers.get(inp.name, [])
        qs = [n for n in users if n.op_type == "QuantizeLinear" and n.domain in _DOMAINS
              and n.input and n.input[0] == inp.name and len(n.output) >= 1]
        if not qs:
            chain, node, pre, why = _follow_chain(inp, consumers, consts, outputs, opset)
            if not chain:
                continue
            op = None
            if why is None:
                try:
                    op = _make_quantizer(node, consts, opset, pre)
                except (ValueError, TypeError) as e:
                    why = f"QuantizeLinear {node.name!r}: {e}"
            found.append((inp.name, "input", node, op, why, chain))
            continue
        node = qs[0]
        reason, op = None, None
        if len(users) > 1 or inp.name in outputs:
            others = sorted({n.op_type for n in users if n is not node})
            reason = (f"input {inp.name!r} also feeds "
                      f"{', '.join(others) if others else 'another QuantizeLinear'}"
                      if len(users) > 1 else f"input {inp.name!r} is also a graph output")
        try:
            op = _make_quantizer(node, consts, opset)
        except (ValueError, TypeError) as e:
            reason = reason or str(e)
            if "constant" not in str(e) and "attribute" not in str(e):
                reason = f"QuantizeLinear {node.name!r}: {e}"
        found.append((inp.name, "input", node, op, reason, []))
    for out in g.output:
        node = producer.get(out.name)
        if node is None or node.op_type != "DequantizeLinear" or node.domain not in _DOMAINS:
            continue
        reason, op = None, None
        if not node.input or node.input[0] == "":   # not a dequantizer of anything
            found.append((out.name, "output", node, None,
                          f"the DequantizeLinear producing {out.name!r} has no input", []))
            continue
        if consumers.get(out.name):
            reason = f"output {out.name!r} also feeds other nodes"
        elif node.input[0] not in producer:
            reason = f"the DequantizeLinear input {node.input[0]!r} is not computed by a node"
        elif node.input[0] in outputs:
            reason = f"the DequantizeLinear input {node.input[0]!r} is also a graph output"
        try:
            op = _make_dequantizer(node, consts, opset)
        except (ValueError, TypeError) as e:
            reason = reason or f"DequantizeLinear {node.name!r}: {e}"
        found.append((out.name, "output", node, op, reason, []))
    return found


def boundary(model) -> list:
    """Graph inputs consumed by a QuantizeLinear and graph outputs produced by a
    DequantizeLinear whose scale and zero point are constants (initializers or Constant
    nodes), as BoundaryEntry(name, kind, node, op) with a ready Quantizer / Dequantizer.
    Opsets 10 to 28; per-tensor, per-axis and blocked; every attribute (axis, block_size,
    output_dtype, saturate, precision). An input that also feeds other nodes is listed (its
    quantizer is right) but split_boundary refuses it.

    An input may reach its QuantizeLinear through a preprocessing chain: Cast to float32,
    Add / Sub / Mul / Div with a float32 constant (a scalar or varying along one axis; the
    chain's tensor first for Sub and Div), Transpose, Reshape / Flatten / Squeeze / Unsqueeze
    with constant shapes, in any order, each intermediate tensor feeding only the next node.
    The quantizer then takes the graph input itself and runs the chain (Quantizer's pre /
    pre_axis / perm; a ChainQuantizer around it when the chain reshapes). A chain it cannot
    take stays in the model (not listed; split_boundary(inputs=[name]) says why)."""
    m = _load(model)
    return [BoundaryEntry(n, k, node, op) for n, k, node, op, _, _ in _scan(m) if op is not None]


def _value_info(vi, elem_type):
    """vi with its element type replaced (shape kept)."""
    new = onnx.ValueInfoProto()
    new.CopyFrom(vi)
    new.type.tensor_type.elem_type = elem_type
    return new


def _rename(g: onnx.GraphProto, old: str, new: str):
    for n in g.node:
        for i, v in enumerate(n.input):
            if v == old:
                n.input[i] = new
        for i, v in enumerate(n.output):
            if v == old:
                n.output[i] = new


def _used_names(g: onnx.GraphProto, acc: set):
    for n in g.node:
        acc.update(n.input)
        for a in n.attribute:   # subgraphs may read outer names
            if a.type == onnx.AttributeProto.GRAPH:
                _used_names(a.g, acc)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    _used_names(sg, acc)
    acc.update(o.name for o in g.output)
    return acc


def split_boundary(model, inputs=None, outputs=None):
    """Remove the boundary QuantizeLinear / DequantizeLinear nodes of a model. Returns
    ``(core_model, quantizers, dequantizers)``: core_model takes the quantized tensors under
    the original input names and returns the quantized outputs under the original output
    names (types and shapes set, onnx.checker clean); the dicts map those names to the
    prepared operators. inputs / outputs: names to split (None: every one boundary() finds
    that can be split; [] none). ValueError, naming the tensor and the reason, for a name
    that cannot be split: not on the boundary, feeding other nodes as well, non-constant
    parameters or attributes qsimd does not support. The model given is not changed.
    Preprocessing chains in front of an input's QuantizeLinear (see boundary()) are removed
    with it: the core model's input has the quantized type and the transposed shape.

    Running the core model on ``quantizers[name](x)`` and applying ``dequantizers`` to its
    outputs gives the original model's results bit for bit wherever the runtime follows the
    ONNX reference. Where onnxruntime (1.32, CPU) departs from it, its run of the original
    model can differ from the split one:

    - float16 x with a float16 scale: onnxruntime divides in float32, the reference (and
      qsimd) rounds the quotient to float16 first (int16, 2048 / 0.30005: 6826 against 6824);
    - float8 with ``saturate=0``: float8e4m3fn gives 448 where the reference gives NaN, for
      quotients of magnitude in [480, 496); float8e5m2 gives NaN where the reference gives
      inf, in [61440, 65536);
    - graph optimizations: at ORT_ENABLE_EXTENDED and above onnxruntime fuses
      QuantizeLinear -> DequantizeLinear -> MatMul (and kin) into integer kernels such as
      QLinearMatMul, which are not exact on every CPU (int8 activations on AVX2 without
      VNNI); without its input QuantizeLinear the core model's first layer fuses
      differently. With ORT_ENABLE_BASIC both models run the unfused operators and agree.

    `model`: a path, an onnx.ModelProto or its serialized bytes; an unreadable, malformed or
    invalid model is a ValueError saying what is wrong."""
    m = _load(model)
    try:
        onnx.checker.check_model(m)
    except Exception as e:   # noqa: BLE001 - ValidationError and what protobuf raises
        raise ValueError(f"model is not a valid ONNX model ({_why(e)})") from None
    found = _scan(m)
    by_kind = {"input": {}, "output": {}}
    chains = {}
    for name, kind, node, op, reason, chain in found:
        by_kind[kind][name] = (node, op, reason)
        chains[(name, kind)] = chain
    plan = []
    for kind, wanted in (("input", inputs), ("output", outputs)):
        if isinstance(wanted, (str, bytes)):
            raise TypeError(f"{kind}s must be a list of names, not a string")
        if wanted is None:
            names = [n for n, (_, op, reason) in by_kind[kind].items() if reason is None]
        else:
            try:
                names = list(wanted)
            except TypeError:
                raise TypeError(f"{kind}s must be a list of names, got "
                                f"{type(wanted).__name__}") from None
            for name in names:
                if not isinstance(name, str):
                    raise TypeError(f"{kind}s must hold names (str), got "
                                    f"{type(name).__name__}")
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise ValueError(f"{kind}s name {dup[0]!r} more than once")
        for name in names:
            if name not in by_kind[kind]:
                op_name = "QuantizeLinear" if kind == "input" else "DequantizeLinear"
                raise ValueError(f"{kind} {name!r} is not on the model's quantized boundary "
                                 f"(no {op_name} {'consumes' if kind == 'input' else 'produces'}"
                                 f" it)")
            node, op, reason = by_kind[kind][name]
            if reason is not None:
                raise ValueError(f"cannot split {kind} {name!r}: {reason}")
            plan.append((name, kind, node, op))

    core = onnx.ModelProto()
    core.CopyFrom(m)
    g = core.graph
    try:   # quantized tensor types for outputs whose value_info is not in the model
        inferred = onnx.shape_inference.infer_shapes(m).graph
        known = {v.name: v for v in list(inferred.value_info) + list(inferred.output)}
    except Exception:   # noqa: BLE001 - inference is a convenience; types are checked below
        known = {}
    quantizers, dequantizers = {}, {}
    removed = []   # the nodes taken out
    for name, kind, node, op in plan:
        idx = [i for i, n in enumerate(g.node) if n.output == node.output and
               n.input == node.input and n.op_type == node.op_type]
        del g.node[idx[0]]   # present: each name is planned once, each node found once
        removed.append(node)
        if kind == "input":
            code = DTYPE_TO_CODE[np.dtype(op.output_dtype)]
            chain = chains[(name, kind)]
            for cn in chain:   # the preprocessing the quantizer now does
                idx = [i for i, n in enumerate(g.node) if n.output == cn.output and
                       n.input == cn.input and n.op_type == cn.op_type]
                del g.node[idx[0]]
                removed.append(cn)
            _rename(g, node.output[0], name)
            for i, vi in enumerate(g.input):
                if vi.name == name:
                    g.input[i].CopyFrom(_value_info(vi, code))
                    perm = None if not chain or isinstance(op, ChainQuantizer) else \
                        op._args[2].get("perm")
                    dims = None
                    if not vi.type.tensor_type.HasField("shape"):
                        pass
                    elif isinstance(op, ChainQuantizer):
                        dims = op._onnx_dims(vi.type.tensor_type.shape.dim)
                    elif perm is not None:
                        dims = [onnx.TensorShapeProto.Dimension() for _ in perm]
                        for j, d in enumerate(dims):
                            d.CopyFrom(vi.type.tensor_type.shape.dim[perm[j]])
                    if dims is not None:
                        shape = g.input[i].type.tensor_type.shape
                        del shape.dim[:]
                        shape.dim.extend(dims)
            quantizers[name] = op
        else:
            q = node.input[0]
            code = None
            if node.input[2:3] and node.input[2] != "" and op.zero_point is not None:
                code = DTYPE_TO_CODE.get(op.zero_point.dtype)
            elif q in known and known[q].type.tensor_type.elem_type:
                code = known[q].type.tensor_type.elem_type
            if code is None:
                raise ValueError(f"output {name!r}: the type of {q!r} (the DequantizeLinear "
                                 f"input) is unknown; run onnx.shape_inference first")
            _rename(g, q, name)
            for i, vi in enumerate(g.output):
                if vi.name == name:
                    g.output[i].CopyFrom(_value_info(vi, code))
            dequantizers[name] = op
    # drop value_info of tensors that no longer exist or changed type, and the constants
    # only the removed nodes read
    renamed = {node.output[0] if kind == "input" else node.input[0]
               for _, kind, node, _ in plan}
    renamed |= {cn.output[0] for name, kind, _, _ in plan for cn in chains[(name, kind)]}
    gone = renamed | {p[0] for p in plan}
    keep = [v for v in g.value_info if v.name not in gone]
    del g.value_info[:]
    g.value_info.extend(keep)
    used = _used_names(g, set())
    params = {i for n in removed for i in n.input[1:]}
    params |= {i for n in removed if n.op_type in ("Add", "Mul") for i in n.input[:1]}
    dead = params - used
    inits = [t for t in g.initializer if t.name not in dead]
    del g.initializer[:]
    g.initializer.extend(inits)
    nodes = [n for n in g.node if not (n.op_type == "Constant" and n.output[0] in dead)]
    del g.node[:]
    g.node.extend(nodes)
    try:
        onnx.checker.check_model(core)
    except Exception as e:   # noqa: BLE001 - a model qsimd could not split cleanly
        raise ValueError(f"the model without its boundary nodes is not valid ({_why(e)})") \
            from None
    return core, quantizers, dequantizers
