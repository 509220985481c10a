"""Quantize a batch of float32 embeddings to uint8 (per-tensor) and to packed int4 (blocked,
32 values per scale), dequantize them again, and report the error and the size saved."""
import numpy as np

import qsimd

rng = np.random.default_rng(0)
emb = rng.standard_normal((256, 768), dtype=np.float32)

# uint8, one scale for the whole batch, chosen by DynamicQuantizeLinear
q8, scale, zp = qsimd.dynamic_quantize_linear(emb)
back8 = qsimd.dequantize_linear(q8, scale, zp)

# int4, symmetric, one scale per 32 consecutive values of each row
block = 32
amax = np.abs(emb.reshape(256, -1, block)).max(axis=-1)
scales = (amax / 7).astype(np.float32)                      # shape (256, 24)
p4 = qsimd.quantize_linear(emb, scales, axis=1, block_size=block, output_dtype="int4",
                           packed=True)                  # PackedTensor: bytes, dtype, shape
raw4 = p4.data                                           # ONNX raw bytes, low nibble first
back4 = qsimd.dequantize_linear(p4, scales, axis=1, block_size=block)   # reads packed bytes

print(f"instruction set: {qsimd.get_isa()}")
print(f"uint8: {q8.nbytes:>7} bytes, max abs error {np.abs(back8 - emb).max():.4f} "
      f"(scale {float(scale):.5f}, zero point {int(zp)})")
print(f"int4 : {raw4.nbytes:>7} bytes, max abs error {np.abs(back4 - emb).max():.4f} "
      f"(+ {scales.nbytes} bytes of scales)")
print(f"float32: {emb.nbytes} bytes")
