"""AMD Quark's quantization nodes in onnxruntime, computed by qsimd.

qsimd's extension module is also an onnxruntime custom-op library: it exports
``RegisterCustomOps``, which registers Quark 0.13's ops with its names, domains, attributes,
defaults and types::

    com.amd.quark     ExtendedQuantizeLinear, ExtendedDequantizeLinear,
                      MXQuantizeDequantize, BFPQuantizeDequantize
    com.vai.quantize  VitisQuantizeLinear, VitisDequantizeLinear, MXFixNeuron, BFPFixNeuron
    com.qsimd.quark   the eight names above (see use_own_domain)

    import onnxruntime as ort, qsimd.ort
    so = ort.SessionOptions()
    qsimd.ort.register(so)            # or so.register_custom_ops_library(library_path())
    sess = ort.InferenceSession("model_quark.onnx", so, providers=["CPUExecutionProvider"])

Malformed nodes (unknown element types or methods, bit widths, block sizes or axes out of
range, wrong input types, 0-d input to MX / BFP) raise onnxruntime's exception with a message
naming the node and the problem. Large tensors are split over the session's intra-op threads
(onnxruntime >= 1.17; 1.16 computes on the calling thread). docs/API.md has the details.

Models that also contain Quark's ExtendedInstanceNormalization or ExtendedLSTM need Quark's
library for those: :func:`use_own_domain` moves the nodes qsimd computes to the domain
``com.qsimd.quark``, so both libraries can be registered in one session without claiming the
same node::

    qsimd.ort.use_own_domain(model)                # qsimd's nodes -> com.qsimd.quark
    so.register_custom_ops_library(quark_library)  # Quark's: instance norm, LSTM
    qsimd.ort.register(so, own_domain_only=True)
"""
from __future__ import annotations

import os

from . import _core

#: The domain of qsimd's own copy of the ops (for models run with Quark's library as well).
OWN_DOMAIN = "com.qsimd.quark"

#: (domain, op type) of every node the library computes.
OPS = tuple((d, n) for d, names in (
    ("com.amd.quark", ("ExtendedQuantizeLinear", "ExtendedDequantizeLinear",
                       "MXQuantizeDequantize", "BFPQuantizeDequantize")),
    ("com.vai.quantize", ("VitisQuantizeLinear", "VitisDequantizeLinear", "MXFixNeuron",
                          "BFPFixNeuron"))) for n in names)


def library_path() -> str:
    """Path of the custom-op library: qsimd's extension module itself, which exports
    ``RegisterCustomOps`` (one copy of the kernels serves Python and onnxruntime)."""
    return os.path.abspath(_core.__file__)


#: Session config entry read by the library: the domains to register, comma-separated.
DOMAINS_KEY = "qsimd.ort.domains"


def register(session_options, *, own_domain_only: bool = False) -> None:
    """Registers qsimd's ops with an ``onnxruntime.SessionOptions``: in all three domains, or
    with `own_domain_only` in :data:`OWN_DOMAIN` alone (the session config entry
    ``qsimd.ort.domains``), which leaves com.amd.quark and com.vai.quantize to Quark's own
    library in the same session (see :func:`use_own_domain`)."""
    if not hasattr(session_options, "register_custom_ops_library"):
        raise TypeError("session_options must be an onnxruntime.SessionOptions, got "
                        f"{type(session_options).__name__}")
    if own_domain_only:
        session_options.add_session_config_entry(DOMAINS_KEY, OWN_DOMAIN)
    session_options.register_custom_ops_library(library_path())


def use_own_domain(model):
    """Moves every node that qsimd computes (:data:`OPS`) to :data:`OWN_DOMAIN`, in place, in
    the graph and its subgraphs, and adds that domain to the model's opset imports; returns
    the model (an ``onnx.ModelProto``). Other nodes, Quark's ExtendedInstanceNormalization and
    ExtendedLSTM among them, keep their domain for Quark's own library."""
    try:
        from onnx import GraphProto, ModelProto, helper
    except ImportError as e:   # pragma: no cover - onnx is in the test extra
        raise ImportError("qsimd.ort.use_own_domain needs the onnx package") from e
    if not isinstance(model, ModelProto):
        raise TypeError(f"model must be an onnx.ModelProto, got {type(model).__name__}")
    ops = set(OPS)

    def walk(graph):
        for node in graph.node:
            if (node.domain, node.op_type) in ops:
                node.domain = OWN_DOMAIN
            for attr in node.attribute:
                if attr.type == attr.GRAPH:
                    walk(attr.g)
                elif attr.type == attr.GRAPHS:
                    for g in attr.graphs:
                        walk(g)

    walk(model.graph)
    for f in model.functions:   # model-local functions hold nodes too
        g = GraphProto()
        g.node.extend(f.node)
        walk(g)
        del f.node[:]
        f.node.extend(g.node)
    if not any(o.domain == OWN_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(OWN_DOMAIN, 1))
    return model


__all__ = ["DOMAINS_KEY", "OWN_DOMAIN", "OPS", "library_path", "register", "use_own_domain"]
