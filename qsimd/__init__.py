"""qsimd: exact, SIMD-accelerated ONNX boundary quantization.

QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, bit-identical to the ONNX
reference where it is defined and to qsimd's numeric contract elsewhere, on every instruction
set. See README.md for the API tour and the architecture.
"""
try:
    from . import _core
except ImportError as e:   # pragma: no cover - depends on how qsimd was installed
    raise ImportError(
        "qsimd's compiled core (qsimd._core) is missing. If you are running from a source "
        "checkout, build it with `pip install -e .` (or run from another directory to use "
        f"an installed qsimd). Original error: {e}") from e
from ._api import (
    Dequantizer,
    Quantizer,
    PackedTensor,
    available_isas,
    cpu_features,
    dequantize_linear,
    dynamic_quantize,
    dynamic_quantize_linear,
    get_include,
    get_isa,
    get_library_dir,
    get_num_threads,
    get_result_cache,
    pack,
    quantize_linear,
    set_isa,
    set_num_threads,
    set_result_cache,
    unpack,
)
from . import quark   # AMD Quark's Extended*Linear names (qsimd.quark)
from .quark import quantize_mx   # OCP MX blocks as ONNX elements + e8m0 scales

__version__ = "0.1.0"

_env_error = _core.env_isa_error()
if _env_error is not None:
    raise RuntimeError(_env_error)
del _env_error

# the result cache's limit: QSIMD_RESULT_CACHE (a bad value is an error, as for QSIMD_ISA:
# a limit silently ignored would defeat its purpose), else a default that fits the machine
from . import _memory
_core.set_result_cache(_memory.result_cache_at_import())

__all__ = [
    "Quantizer",
    "Dequantizer",
    "PackedTensor",
    "quantize_linear",
    "dequantize_linear",
    "dynamic_quantize_linear",
    "dynamic_quantize",
    "pack",
    "unpack",
    "cpu_features",
    "available_isas",
    "get_isa",
    "set_isa",
    "get_include",
    "get_library_dir",
    "set_num_threads",
    "get_num_threads",
    "set_result_cache",
    "get_result_cache",
    "quark",
    "quantize_mx",
    "__version__",
]
