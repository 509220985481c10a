"""Per-call overhead of small calls (1K float32 elements): min over repeats of timeit loops.

This measures the Python/Cython argument path, not the kernels (a 1K-element kernel takes
tens of nanoseconds). With PyTorch installed, the "[torch]" rows make the same calls with
torch tensors (x, and out= where the NumPy row has it) and show what they cost beyond the
NumPy row, measured in the same rounds; the bar is 0.3 us. Run on a quiet machine:

    python benchmarks/small_calls.py [--number 100000] [--repeat 7]
"""
import argparse
import timeit

import ml_dtypes
import numpy as np

import qsimd


def cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1024).astype(np.float32)
    s = np.float32(0.05)
    z8 = np.uint8(128)
    sh = np.float16(0.05)
    u8 = np.empty(1024, np.uint8)
    x3 = x.reshape(4, 64, 4)
    s64 = (rng.random(64) + 0.01).astype(np.float32)
    xb = x.reshape(32, 32)
    sb = (rng.random((32, 1)) + 0.01).astype(np.float32)
    zb = rng.integers(-8, 8, (32, 1)).astype(ml_dtypes.int4)
    xh = x.astype(np.float16)
    xbf = x.astype(ml_dtypes.bfloat16)
    q8 = rng.integers(0, 256, 1024).astype(np.uint8)
    q4 = rng.integers(-8, 8, 1024).astype(ml_dtypes.int4)
    pt = qsimd.quantize_linear(x, s, output_dtype="int4", packed=True)
    f32 = np.empty(1024, np.float32)
    Q, D = qsimd.quantize_linear, qsimd.dequantize_linear
    pq = qsimd.Quantizer(s, z8)
    pdq = qsimd.Dequantizer(s, z8)
    pq3 = qsimd.Quantizer(s64, axis=1)
    u8src = np.empty(1024, np.uint8)
    f32dst = np.empty(1024, np.float32)
    return [
        # the bar for prepared calls: NumPy copying the same bytes (the 1K-byte result, and
        # the 4K-byte input) through its own C entry point
        ("np.copyto 1K uint8", lambda: np.copyto(u8, u8src)),
        ("np.copyto 1K float32", lambda: np.copyto(f32dst, x)),
        ("Quantizer f32->u8 out=", lambda: pq(x, out=u8)),
        ("Quantizer f32->u8", lambda: pq(x)),
        ("Quantizer per-axis ax1", lambda: pq3(x3)),
        ("Dequantizer u8->f32 out=", lambda: pdq(q8, out=f32)),
        ("Q f32->u8 out=", lambda: Q(x, s, z8, out=u8)),
        ("Q f32->u8", lambda: Q(x, s, z8)),
        ("Q f32->int16", lambda: Q(x, s, output_dtype="int16")),
        ("Q f32->int4 packed", lambda: Q(x, s, output_dtype="int4", packed=True)),
        ("Q f32->float8e4m3fn", lambda: Q(x, s, output_dtype="float8e4m3fn")),
        ("Q per-axis (4,64,4) ax1", lambda: Q(x3, s64, axis=1)),
        ("Q blocked 32 + int4 zp", lambda: Q(xb, sb, zb, axis=-1, block_size=32)),
        ("Q f16 x", lambda: Q(xh, s)),
        ("DQ u8->f32 out=", lambda: D(q8, s, z8, out=f32)),
        ("DQ u8->f32", lambda: D(q8, s, z8)),
        ("DQ u8->f16", lambda: D(q8, sh)),
        ("DQ int4->f32", lambda: D(q4, s)),
        ("DQ PackedTensor int4", lambda: D(pt, s)),
        ("dynamic_quantize_linear", lambda: qsimd.dynamic_quantize_linear(x)),
        ("dynamic_quantize per row", lambda: qsimd.dynamic_quantize(xb)),
        ("Q bf16 x", lambda: Q(xbf, s)),
    ] + torch_cases(locals())


def torch_cases(v):
    """The same calls with torch tensors over the same memory: (name, fn, NumPy row)."""
    try:
        import torch
    except ImportError:
        return []
    t = {k: torch.from_numpy(v[k]) for k in ("x", "u8", "q8", "f32", "xb")}
    tbf = torch.from_numpy(v["xbf"].view(np.int16)).view(torch.bfloat16)
    Q, D, s, z8 = v["Q"], v["D"], v["s"], v["z8"]
    pq, pdq = v["pq"], v["pdq"]
    return [
        ("Quantizer f32->u8 out= [torch]", lambda: pq(t["x"], out=t["u8"]), "Quantizer f32->u8 out="),
        ("Quantizer f32->u8 [torch]", lambda: pq(t["x"]), "Quantizer f32->u8"),
        ("Dequantizer u8->f32 out= [torch]", lambda: pdq(t["q8"], out=t["f32"]),
         "Dequantizer u8->f32 out="),
        ("Q f32->u8 out= [torch]", lambda: Q(t["x"], s, z8, out=t["u8"]), "Q f32->u8 out="),
        ("Q f32->u8 [torch]", lambda: Q(t["x"], s, z8), "Q f32->u8"),
        ("DQ u8->f32 out= [torch]", lambda: D(t["q8"], s, z8, out=t["f32"]), "DQ u8->f32 out="),
        ("DQ u8->f32 [torch]", lambda: D(t["q8"], s, z8), "DQ u8->f32"),
        ("dynamic_quantize_linear [torch]", lambda: qsimd.dynamic_quantize_linear(t["x"]),
         "dynamic_quantize_linear"),
        ("dynamic_quantize per row [torch]", lambda: qsimd.dynamic_quantize(t["xb"]),
         "dynamic_quantize per row"),
        ("Q bf16 x [torch]", lambda: Q(tbf, s), "Q bf16 x"),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--number", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"isa {qsimd.get_isa()}; min of {args.repeat} x {args.number} calls, us per call")
    # rounds interleave the cases, so that load from elsewhere hits them all alike
    cs = [c if len(c) == 3 else c + (None,) for c in cases()]
    best = [float("inf")] * len(cs)
    for _ in range(args.repeat):
        for i, (_, fn, _) in enumerate(cs):
            best[i] = min(best[i], timeit.timeit(fn, number=args.number) / args.number)
    us = {name: t * 1e6 for (name, _, _), t in zip(cs, best)}
    for name, _, pair in cs:
        extra = f"   {us[name] - us[pair]:+.3f} vs NumPy (bar +0.300)" if pair else ""
        print(f"{name:<34} {us[name]:7.3f}{extra}")


if __name__ == "__main__":
    main()
