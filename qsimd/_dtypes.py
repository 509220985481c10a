"""Element types: ONNX TensorProto codes <-> NumPy / ml_dtypes dtypes, and name resolution."""
from __future__ import annotations

from typing import NamedTuple

import ml_dtypes
import numpy as np

# ONNX TensorProto.DataType code -> dtype (ml_dtypes for the types NumPy lacks).
CODE_TO_DTYPE = {
    1: np.dtype(np.float32),
    2: np.dtype(np.uint8),
    3: np.dtype(np.int8),
    4: np.dtype(np.uint16),
    5: np.dtype(np.int16),
    6: np.dtype(np.int32),
    10: np.dtype(np.float16),
    12: np.dtype(np.uint32),
    16: np.dtype(ml_dtypes.bfloat16),
    17: np.dtype(ml_dtypes.float8_e4m3fn),
    18: np.dtype(ml_dtypes.float8_e4m3fnuz),
    19: np.dtype(ml_dtypes.float8_e5m2),
    20: np.dtype(ml_dtypes.float8_e5m2fnuz),
    21: np.dtype(ml_dtypes.uint4),
    22: np.dtype(ml_dtypes.int4),
    23: np.dtype(ml_dtypes.float4_e2m1fn),
    24: np.dtype(ml_dtypes.float8_e8m0fnu),
    25: np.dtype(ml_dtypes.uint2),
    26: np.dtype(ml_dtypes.int2),
    27: np.dtype(ml_dtypes.float6_e2m3fn),   # opset 28
    28: np.dtype(ml_dtypes.float6_e3m2fn),
}
DTYPE_TO_CODE = {dt: code for code, dt in CODE_TO_DTYPE.items()}

# ONNX enum names (TensorProto.FLOAT8E4M3FN ...) and common aliases, lower-cased.
_ONNX_NAMES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "float16": 10,
    "uint32": 12, "bfloat16": 16, "float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19,
    "float8e5m2fnuz": 20, "uint4": 21, "int4": 22, "float4e2m1": 23, "float8e8m0": 24,
    "uint2": 25, "int2": 26, "float32": 1, "half": 10, "float4e2m1fn": 23, "float8e8m0fnu": 24,
    "float6e2m3": 27, "float6e3m2": 28, "float6e2m3fn": 27, "float6e3m2fn": 28,
}
# Codes ONNX defines that qsimd does not handle, for a precise message.
_ONNX_OTHER = {0: "undefined", 7: "int64", 8: "string", 9: "bool", 11: "double",
               13: "uint64", 14: "complex64", 15: "complex128"}

SUBBYTE_BITS = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2, 27: 6, 28: 6}

Q_INPUT_CODES = (1, 10, 16, 6)            # float32, float16, bfloat16, int32
Q_SCALE_CODES = (1, 10, 16, 6, 24)        # + float8e8m0 (opset 24)
DQ_SCALE_CODES = (1, 10, 16, 24)
FLOAT_OUT_CODES = (1, 10, 16)
INT_OUTPUT_CODES = (2, 3, 4, 5, 21, 22, 25, 26)
FLOAT8_CODES = (17, 18, 19, 20)           # e4m3fn, e4m3fnuz, e5m2, e5m2fnuz
FLOAT4_CODE = 23
FLOAT6_CODES = (27, 28)                   # float6e2m3, float6e3m2 (opset 28)
# AMD Quark's ExtendedQuantizeLinear / ExtendedDequantizeLinear add these to ONNX's types.
QUARK_EXTRA_CODES = (6, 12, 10, 16)       # int32, uint32, float16, bfloat16
Q_OUTPUT_CODES = INT_OUTPUT_CODES + FLOAT8_CODES + (FLOAT4_CODE,) + FLOAT6_CODES + \
    QUARK_EXTRA_CODES
DQ_INPUT_CODES = INT_OUTPUT_CODES + (6, 12) + FLOAT8_CODES + (FLOAT4_CODE,) + FLOAT6_CODES + \
    (10, 16)
DQ_OUTPUT_CODES = FLOAT_OUT_CODES + (24,)   # e8m0: the reference's output for an e8m0 scale
# Zero points that are not integers: given as Python numbers they must be exact in the type.
FLOAT_ZP_CODES = FLOAT8_CODES + (FLOAT4_CODE,) + FLOAT6_CODES + (10, 16)
INT_RANGE = {2: (0, 255), 3: (-128, 127), 4: (0, 65535), 5: (-32768, 32767), 6: (-2**31, 2**31 - 1),
             12: (0, 2**32 - 1), 21: (0, 15), 22: (-8, 7), 25: (0, 3), 26: (-2, 1)}


def name_of(code: int) -> str:
    dt = CODE_TO_DTYPE.get(code)
    return dt.name if dt is not None else _ONNX_OTHER.get(code, f"onnx type {code}")


def resolve(spec, argname: str) -> int:
    """Any dtype spelling -> ONNX code. TypeError naming `argname` when it is not a type."""
    if isinstance(spec, (bool, np.bool_)):
        raise TypeError(f"{argname} must be a dtype, a dtype name or an ONNX type code, got {spec!r}")
    if isinstance(spec, (int, np.integer)):
        code = int(spec)
        if code in CODE_TO_DTYPE:
            return code
        if code in _ONNX_OTHER:
            raise TypeError(f"{argname}: ONNX type {code} ({_ONNX_OTHER[code]}) is not supported")
        raise TypeError(f"{argname}: {code} is not an ONNX TensorProto data type code")
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key.startswith("tensorproto."):
            key = key[len("tensorproto."):]
        named = _ONNX_NAMES.get(key.replace("_", ""))
        if named is not None:
            return named
    try:
        dt = np.dtype(spec)
    except TypeError:
        raise TypeError(f"{argname}: {spec!r} is not a dtype") from None
    found = DTYPE_TO_CODE.get(dt.newbyteorder("="))
    if found is None:
        raise TypeError(f"{argname}: dtype {dt} is not a quantization type")
    return found


class PackedTensor(NamedTuple):
    """6-, 4- or 2-bit data in the ONNX raw layout (element 0 in the lowest bits, zero padding;
    6-bit codes 4 in 3 bytes) with its element type and logical shape. What
    ``quantize_linear(..., packed=True)`` returns (``.data`` is the raw bytes) and what
    ``dequantize_linear`` reads directly, without unpacking; ``qsimd.unpack(*t)`` gives the
    ml_dtypes array."""
    data: np.ndarray   # uint8, ceil(n * bits / 8) bytes (bytes-like objects are accepted too)
    dtype: object      # int4, uint4, int2, uint2, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn
    shape: tuple

    def tobytes(self) -> bytes:
        """The raw bytes (what an ONNX TensorProto's raw_data holds)."""
        return np.asarray(self.data, np.uint8).tobytes()


def dlpack_dtypes() -> dict:
    """(DLPack type code, bits) -> dtype for every element type NumPy or ml_dtypes has: qsimd's
    types and the others (float64, int64, bool, ...), so that an unsupported tensor is refused
    with its real type's name. Sub-byte DLPack types are packed and have no entry."""
    table = {(2, 32): np.float32, (2, 16): np.float16, (2, 64): np.float64,
             (4, 16): ml_dtypes.bfloat16, (5, 64): np.complex64, (5, 128): np.complex128,
             (6, 8): np.bool_}
    for code, kind in ((0, "int"), (1, "uint")):
        for bits in (8, 16, 32, 64):
            table[(code, bits)] = np.dtype(f"{kind}{bits}")
    for code, name in ((7, "float8_e3m4"), (8, "float8_e4m3"), (9, "float8_e4m3b11fnuz"),
                       (10, "float8_e4m3fn"), (11, "float8_e4m3fnuz"), (12, "float8_e5m2"),
                       (13, "float8_e5m2fnuz"), (14, "float8_e8m0fnu")):
        if hasattr(ml_dtypes, name):
            table[(code, 8)] = getattr(ml_dtypes, name)
    return {k: np.dtype(v) for k, v in table.items()}
