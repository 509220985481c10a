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

import os
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ._api import Dequantizer, Quantizer
from ._dtypes import DTYPE_TO_CODE

__all__ = ["BoundaryEntry", "boundary", "split_boundary"]

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


def _make_quantizer(node, consts, opset):
    a = _attrs(node, _Q_ATTRS, opset)
    scale, zp = _params(node, consts)
    prec = a.get("precision") or None
    return Quantizer(scale, zp, axis=a.get("axis", 1), block_size=a.get("block_size", 0),
                     output_dtype=a.get("output_dtype") or None,
                     saturate=bool(a.get("saturate", 1)), precision=prec)


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
        found.append((inp.name, "input", node, op, reason))
    for out in g.output:
        node = producer.get(out.name)
        if node is None or node.op_type != "DequantizeLinear" or node.domain not in _DOMAINS:
            continue
        reason, op = None, None
        if not node.input or node.input[0] == "":   # not a dequantizer of anything
            found.append((out.name, "output", node, None,
                          f"the DequantizeLinear producing {out.name!r} has no input"))
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
        found.append((out.name, "output", node, op, reason))
    return found


def boundary(model) -> list:
    """Graph inputs consumed by a QuantizeLinear and graph outputs produced by a
    DequantizeLinear whose scale and zero point are constants (initializers or Constant
    nodes), as BoundaryEntry(name, kind, node, op) with a ready Quantizer / Dequantizer.
    Opsets 10 to 28; per-tensor, per-axis and blocked; every attribute (axis, block_size,
    output_dtype, saturate, precision). An input that also feeds other nodes is listed (its
    quantizer is right) but split_boundary refuses it."""
    m = _load(model)
    return [BoundaryEntry(n, k, node, op) for n, k, node, op, _ in _scan(m) if op is not None]


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
    for name, kind, node, op, reason in found:
        by_kind[kind][name] = (node, op, reason)
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
            _rename(g, node.output[0], name)
            for i, vi in enumerate(g.input):
                if vi.name == name:
                    g.input[i].CopyFrom(_value_info(vi, code))
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
    gone = renamed | {p[0] for p in plan}
    keep = [v for v in g.value_info if v.name not in gone]
    del g.value_info[:]
    g.value_info.extend(keep)
    used = _used_names(g, set())
    params = {i for n in removed for i in n.input[1:]}
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
