"""A camera frame to a vision model's quantized input in one call.

A 224x224x3 uint8 frame (HWC) is normalised with ImageNet's mean and std, moved to NCHW and
quantized to int8: `qsimd.Quantizer(..., pre=..., perm=...)` does all of it in one pass and
gives the same bits as the NumPy chain followed by quantize_linear, which this checks before
timing both.

    python examples/camera_frame.py
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

import qsimd

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
SCALE, ZERO_POINT = np.float32(0.0186), np.int8(-2)   # the model's input QuantizeLinear


def numpy_chain(frames: NDArray[np.uint8]) -> NDArray[Any]:
    """The same preprocessing, step by step in float32."""
    t = frames.astype(np.float32) / np.float32(255.0)
    t = (t - MEAN) / STD
    return qsimd.quantize_linear(np.ascontiguousarray(t.transpose(0, 3, 1, 2)), SCALE,
                                 ZERO_POINT)


def best_of(fn: Any, repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    q = qsimd.Quantizer(SCALE, ZERO_POINT,
                        pre=[("div", 255.0), ("sub", MEAN), ("div", STD)],  # float32 ops
                        pre_axis=-1,            # the per-channel constants run along C
                        perm=(0, 3, 1, 2))      # NHWC -> NCHW
    frames = np.random.default_rng(0).integers(0, 256, (1, 224, 224, 3), dtype=np.uint8)
    y = q(frames)
    assert y.shape == (1, 3, 224, 224) and y.dtype == np.int8
    assert np.array_equal(y, numpy_chain(frames)), "differs from the NumPy chain"
    out = np.empty_like(y)
    fused = best_of(lambda: q(frames, out=out))
    steps = best_of(lambda: numpy_chain(frames))
    print(f"frame -> int8 NCHW: qsimd {fused * 1e6:.0f} us, NumPy chain + quantize_linear "
          f"{steps * 1e6:.0f} us ({steps / fused:.1f}x), identical results")


if __name__ == "__main__":
    main()
