"""Input boundary of a vision model: camera frames through a preprocessing chain into
quantized NCHW tensors, side by side in one process (interleaved rounds, medians; one thread).

Rows:
  frame     one 224x224x3 uint8 HWC frame -> ((x / 255 - mean) / std), NCHW, int8
  batch32   32 such frames in one call
  float     float32 NHWC (1, 224, 224, 3) -> (x - mean) / std, NCHW, int8
Columns: qsimd.Quantizer(pre=..., perm=...); np.copyto of the input's bytes (the frame rows'
floor); the NumPy chain + qsimd.quantize_linear; PyTorch's chain + torch.quantize_per_tensor;
for the float row qsimd's plain f32 -> int8 quantize_linear of the same tensor (no chain, no
transpose). Ratios: copy / qsimd (bar <= 3x means qsimd / copy <= 3), NumPy / qsimd,
torch / qsimd, qsimd / plain.

    python benchmarks/frames.py [--budget 0.5]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import qsimd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import median_times, torch  # noqa: E402

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
SCALE, ZP = np.float32(0.0186), np.int8(-2)


def numpy_chain(x, pre_scale):
    t = x.astype(np.float32)
    if pre_scale:
        t = t / np.float32(255.0)
    t = (t - MEAN) / STD
    return qsimd.quantize_linear(np.ascontiguousarray(t.transpose(0, 3, 1, 2)), SCALE, ZP)


def frame_case(x, pre_scale, budget):
    pre = ([("div", 255.0)] if pre_scale else []) + [("sub", MEAN), ("div", STD)]
    q = qsimd.Quantizer(SCALE, ZP, pre=pre, perm=(0, 3, 1, 2))
    n, h, w, c = x.shape
    y = np.empty((n, c, h, w), np.int8)
    want = numpy_chain(x, pre_scale)
    assert np.array_equal(q(x, out=y), want), "qsimd differs from the NumPy chain"
    fns = {"qsimd": lambda: q(x, out=y), "numpy": lambda: numpy_chain(x, pre_scale)}
    if x.dtype == np.uint8:
        dst = np.empty_like(x)
        fns["copy"] = lambda: np.copyto(dst, x)
    else:
        flat = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        yq = np.empty(flat.shape, np.int8)
        fns["plain"] = lambda: qsimd.quantize_linear(flat, SCALE, ZP, out=yq)
    if torch is not None:
        tx = torch.from_numpy(x)
        tm = torch.from_numpy(MEAN)
        ts = torch.from_numpy(STD)

        def torch_chain():
            t = tx.float()
            if pre_scale:
                t = t / 255.0
            t = ((t - tm) / ts).permute(0, 3, 1, 2).contiguous()
            return torch.quantize_per_tensor(t, float(SCALE), int(ZP), torch.qint8)
        fns["torch"] = torch_chain
    return median_times(fns, budget=budget)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=0.5, help="seconds per row (about)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = [("frame", rng.integers(0, 256, (1, 224, 224, 3), dtype=np.uint8), True),
            ("batch32", rng.integers(0, 256, (32, 224, 224, 3), dtype=np.uint8), True),
            ("float", rng.random((1, 224, 224, 3), dtype=np.float32), False)]
    print(f"qsimd {qsimd.__version__}, ISA {qsimd.get_isa()}, one thread; median us per call")
    print("| row | qsimd | copy | numpy chain | torch chain | plain f32->int8 | qsimd/copy "
          "| numpy/qsimd | torch/qsimd | qsimd/plain |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, x, pre_scale in rows:
        t = frame_case(x, pre_scale, args.budget)
        us = {k: v * 1e6 for k, v in t.items()}
        q = us["qsimd"]

        def cell(k):
            return f"{us[k]:.1f}" if k in us else "-"

        def ratio(a, b):
            return f"{us[a] / us[b]:.2f}" if a in us and b in us else "-"
        print(f"| {name} | {q:.1f} | {cell('copy')} | {cell('numpy')} | {cell('torch')} | "
              f"{cell('plain')} | {ratio('qsimd', 'copy')} | {ratio('numpy', 'qsimd')} | "
              f"{ratio('torch', 'qsimd')} | {ratio('qsimd', 'plain')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
