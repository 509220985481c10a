"""qsimd on the layouts real networks have: channel blocks, short rows, per-axis on the last
axis, MX / BFP along any axis, weights, threads.

Each row is timed side by side with its baseline in the same interleaved rounds (bench.py's
median_times), so the ratio column comes from one run:
- QuantizeLinear / DequantizeLinear rows: against per-tensor quantization (dequantization) of the
  same tensor to (from) the same type; the bar is 1.3x.
- MX / BFP rows (AMD Quark's fake quantization, float32 -> float32): against np.copyto of the
  same float32 bytes (bar 2x), and against AMD Quark's own op through onnxruntime with --quark
  (bar: qsimd at least 50x faster). qsimd writes into a preallocated array (out=), as the copy
  does.
- dynamic rows (qsimd.dynamic_quantize, uint8, a scale and zero point per block of 32 along the
  axis): against DynamicQuantizeLinear of the same tensor (one range for all of it); no issue
  sets a bar here, 2x is shown as a guide (two passes over x either way, plus a scale, zero
  point and reciprocal per group).
- threads: 16M f32->u8 with num_threads=2 against one thread (bar 1.6x).

    python benchmarks/layouts.py                     # every row, the active instruction set
    python benchmarks/layouts.py --isa avx2 --quark  # AVX2 tier, Quark's op as a peer
    python benchmarks/layouts.py --only mx,bfp --markdown out.md
    python benchmarks/layouts.py --prepared          # Q/DQ rows as qsimd.Quantizer / Dequantizer

With --prepared, both sides of a Q/DQ row are prepared operators (parameters checked and their
entries converted once, as a server holding a model's scales runs them).

    python benchmarks/layouts.py --sweep             # the worst layouts of a grid: cliffs

--sweep times QuantizeLinear / DequantizeLinear (uint8) of a grid of small and odd shapes (NCHW
of 1 to 14 pixels a side, matrices of 3 to 768 columns) on every axis, per-axis and blocked 16 /
32 / 128, each against per-tensor of the same tensor, and lists the worst ratios: a layout
that falls off every fast path shows up there, whatever the table above times.

A row's verdict ('ok' / 'OVER') compares its ratio with its bar.
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (median_times, machine, Quark sessions)

import qsimd  # noqa: E402

# Tensors of real networks: NCHW activations, transformer activations, a weight matrix.
TENSORS = {
    "1x64x56x56": (1, 64, 56, 56),
    "1x256x14x14": (1, 256, 14, 14),
    "8x512x7x7": (8, 512, 7, 7),
    "1x197x768": (1, 197, 768),
    "16x4096": (16, 4096),
}
WEIGHTS = (4096, 4096)


def axes_of(shape):
    """The channel axis (1; axis 0 of a matrix) and the last axis."""
    return [("ch", 0 if len(shape) == 2 else 1), ("last", len(shape) - 1)]


def _x(shape, seed=1):
    return (np.random.default_rng(seed).standard_normal(shape) * 4).astype(np.float32)


def _params(shape, axis, per, block, ydt, rng):
    """scale, zero point for a granularity ('tensor', 'axis', 'block')."""
    if per == "tensor":
        return np.float32(0.05), np.zeros((), ydt)
    if per == "axis":
        sshape = (shape[axis],)
    else:
        sshape = list(shape)
        sshape[axis] = -(-shape[axis] // block)
        sshape = tuple(sshape)
    scale = (rng.random(sshape) * 0.1 + 0.01).astype(np.float32)
    lo = int(ml_dtypes.iinfo(ydt).min) if ydt.kind in "iu" or ydt.name.startswith(("int", "uint")) else 0
    zp = np.full(sshape, 1 if lo < 0 else 3, ydt)
    return scale, zp


PREPARED = False   # --prepared: Q/DQ rows through qsimd.Quantizer / qsimd.Dequantizer


def _op(fn, s, z, out, **kw):
    """One timed call of quantize_linear / dequantize_linear (fn), or of the prepared operator
    made once from the same arguments."""
    if not PREPARED:
        return lambda x: fn(x, s, z, out=out, **kw)  # noqa: E731
    prep = (qsimd.Quantizer if fn is qsimd.quantize_linear else qsimd.Dequantizer)(s, z, **kw)
    return lambda x: prep(x, out=out)  # noqa: E731


def _out_q(shape, ydt, packed):
    n = int(np.prod(shape))
    return np.empty(((n + 1) // 2,), np.uint8) if packed else np.empty(shape, ydt)


def q_row(shape, axis, per, block, out_name, packed=False):
    """(ours, baseline) for QuantizeLinear of granularity `per` vs per-tensor."""
    ydt = np.dtype(getattr(ml_dtypes, out_name, None) or out_name)
    x = _x(shape)
    rng = np.random.default_rng(2)
    s, z = _params(shape, axis, per, block, ydt, rng)
    s0, z0 = _params(shape, axis, "tensor", 0, ydt, rng)
    out, out0 = _out_q(shape, ydt, packed), _out_q(shape, ydt, packed)
    kw = dict(axis=axis, block_size=block if per == "block" else 0, packed=packed, num_threads=1)
    if PREPARED:   # (the operators are made for an output type; the functions take it from z)
        kw["output_dtype"] = ydt
    ours = _op(qsimd.quantize_linear, s, z, out, **kw)
    base = _op(qsimd.quantize_linear, s0, z0, out0, **dict(kw, axis=1, block_size=0))
    return lambda: ours(x), lambda: base(x)


def dq_row(shape, axis, per, block, in_name, packed=False):
    """(ours, baseline) for DequantizeLinear of granularity `per` vs per-tensor."""
    ydt = np.dtype(getattr(ml_dtypes, in_name, None) or in_name)
    rng = np.random.default_rng(3)
    s, z = _params(shape, axis, per, block, ydt, rng)
    s0, z0 = _params(shape, axis, "tensor", 0, ydt, rng)
    q = qsimd.quantize_linear(_x(shape), s0, z0, packed=packed)
    out, out0 = np.empty(shape, np.float32), np.empty(shape, np.float32)
    kw = dict(axis=axis, block_size=block if per == "block" else 0, num_threads=1)
    ours = _op(qsimd.dequantize_linear, s, z, out, **kw)
    base = _op(qsimd.dequantize_linear, s0, z0, out0, **dict(kw, axis=1, block_size=0))
    return lambda: ours(q), lambda: base(q)


def copy_floor(shape):
    src, dst = _x(shape), np.empty(shape, np.float32)
    return lambda: np.copyto(dst, src)


MX_KINDS = [("mx int8 rm0", "mx", dict(element_dtype="int8", rounding_mode=0)),
            ("mx int8 rm2", "mx", dict(element_dtype="int8", rounding_mode=2)),
            ("mx fp8_e4m3 rm0", "mx", dict(element_dtype="fp8_e4m3", rounding_mode=0)),
            ("mx fp8_e4m3 rm2", "mx", dict(element_dtype="fp8_e4m3", rounding_mode=2)),
            ("mx fp4_e2m1 rm0", "mx", dict(element_dtype="fp4_e2m1", rounding_mode=0)),
            ("mx fp4_e2m1 rm2", "mx", dict(element_dtype="fp4_e2m1", rounding_mode=2)),
            ("bfp to_bfp 16", "bfp", dict(bfp_method="to_bfp", bit_width=16)),
            ("bfp to_bfp_prime 13", "bfp", dict(bfp_method="to_bfp_prime", bit_width=13))]


def mxbfp_row(shape, axis, op, attrs):
    x = _x(shape, 4)
    out = np.empty(shape, np.float32)
    if op == "mx":
        ours = lambda: qsimd.quark.mx_quantize_dequantize(x, axis=axis, block_size=32,  # noqa: E731
                                                          num_threads=1, out=out, **attrs)
        name, qattrs = "MXQuantizeDequantize", dict(attrs, axis=axis, block_size=32)
    else:
        ours = lambda: qsimd.quark.bfp_quantize_dequantize(x, axis=axis, block_size=8,  # noqa: E731
                                                           num_threads=1, out=out, **attrs)
        name, qattrs = "BFPQuantizeDequantize", dict(attrs, axis=axis, block_size=8)
    sess = bench._quark_session(name, shape, **qattrs)
    quark = (lambda: sess.run(None, {"x": x})) if sess is not None else None
    return ours, copy_floor(shape), quark


def dyn_row(shape, axis, block):
    """(ours, baseline): dynamic quantization per block vs DynamicQuantizeLinear."""
    x = _x(shape)
    out = np.empty(shape, np.uint8)
    ours = lambda: qsimd.dynamic_quantize(x, axis=axis, block_size=block, out=out,  # noqa: E731
                                          num_threads=1)
    return ours, lambda: qsimd.dynamic_quantize_linear(x, out=out)


def rows(only):
    """(section, label, fns, bar, kind): fns maps 'qsimd' and the baseline (and 'quark')."""
    want = lambda k: not only or k in only  # noqa: E731
    for tname, shape in TENSORS.items():
        for aname, axis in axes_of(shape):
            if want("axis"):
                yield ("Q/DQ", f"{tname} per-axis u8, {aname} axis", q_row(shape, axis, "axis", 0, "uint8"))
                yield ("Q/DQ", f"{tname} DQ per-axis u8, {aname} axis", dq_row(shape, axis, "axis", 0, "uint8"))
            if want("block"):
                yield ("Q/DQ", f"{tname} blocked 32 u8, {aname} axis",
                       q_row(shape, axis, "block", 32, "uint8"))
                yield ("Q/DQ", f"{tname} blocked 32 int4 packed, {aname} axis",
                       q_row(shape, axis, "block", 32, "int4", packed=True))
                yield ("Q/DQ", f"{tname} DQ blocked 32 u8, {aname} axis",
                       dq_row(shape, axis, "block", 32, "uint8"))
                yield ("Q/DQ", f"{tname} DQ blocked 32 int4 packed, {aname} axis",
                       dq_row(shape, axis, "block", 32, "int4", packed=True))
    if want("weights"):
        for axis in (0, 1):
            yield ("Q/DQ", f"4096x4096 int4 packed blocked 128, axis {axis}",
                   q_row(WEIGHTS, axis, "block", 128, "int4", packed=True))
            yield ("Q/DQ", f"4096x4096 DQ int4 packed blocked 128, axis {axis}",
                   dq_row(WEIGHTS, axis, "block", 128, "int4", packed=True))
    if want("dyn"):
        for tname, shape in TENSORS.items():
            for aname, axis in axes_of(shape):
                yield ("dynamic", f"{tname} dynamic_quantize blocks of 32 u8, {aname} axis",
                       dyn_row(shape, axis, 32))
    for tname, shape in TENSORS.items():
        for aname, axis in axes_of(shape):
            for label, op, attrs in MX_KINDS:
                if want(op):
                    yield ("MX/BFP", f"{tname} {label}, {aname} axis", mxbfp_row(shape, axis, op, attrs))


BARS = {"Q/DQ": 1.3, "MX/BFP": 2.0, "dynamic": 2.0}


def threads_row(budget):
    n = 16 << 20
    x = _x((n,))
    out = np.empty(n, np.uint8)
    one = lambda: qsimd.quantize_linear(x, np.float32(0.05), np.uint8(0), out=out, num_threads=1)  # noqa: E731
    two = lambda: qsimd.quantize_linear(x, np.float32(0.05), np.uint8(0), out=out, num_threads=2)  # noqa: E731
    t = bench.median_times({"two": two, "one": one}, budget)
    return t["two"], t["one"]


def sweep(budget, worst=15):
    """The worst ratios against per-tensor over a grid of shapes, axes and granularities."""
    shapes = ([(1, c, h, h) for c in (16, 64, 256) for h in (1, 2, 3, 4, 7, 14)] +
              [(r, d) for d in (3, 7, 12, 56, 100, 768) for r in (64, 1024)])
    res = []
    for shape in shapes:
        for axis in range(len(shape)):
            for block in (0, 16, 32, 128):
                if shape[axis] == 1 or (block and block >= 2 * shape[axis] and block != 32):
                    continue
                per = "block" if block else "axis"
                for name, fns in (("Q", q_row(shape, axis, per, block, "uint8")),
                                  ("DQ", dq_row(shape, axis, per, block, "uint8"))):
                    t = bench.median_times({"qsimd": fns[0], "base": fns[1]}, budget)
                    res.append((t["qsimd"] / t["base"], name, shape, axis, block, t["qsimd"]))
    res.sort(key=lambda r: -r[0])
    print(f"Machine: {bench.machine()}\n\n| ratio | op | shape | axis | granularity | qsimd µs |\n"
          "|---|---|---|---|---|---|")
    for ratio, name, shape, axis, block, t in res[:worst]:
        gran = f"blocked {block}" if block else "per-axis"
        print(f"| {ratio:.2f} | {name} | {'x'.join(map(str, shape))} | {axis} | {gran} | "
              f"{t * 1e6:.2f} |")
    print(f"\n{len(res)} layouts; median ratio {np.median([r[0] for r in res]):.2f}, "
          f"{sum(r[0] > 3 for r in res)} over 3x")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isa", default=None, help="force an instruction set")
    ap.add_argument("--budget", type=float, default=0.2, help="seconds per measurement")
    ap.add_argument("--only", default="", help="comma list of: axis,block,weights,dyn,mx,bfp,threads")
    ap.add_argument("--match", default="", help="only rows whose label contains this text")
    ap.add_argument("--quark", action="store_true", help="time AMD Quark's own op (builds it)")
    ap.add_argument("--markdown", default=None, help="also write the table to this file")
    ap.add_argument("--prepared", action="store_true",
                    help="Q/DQ rows through prepared operators (Quantizer / Dequantizer)")
    ap.add_argument("--sweep", action="store_true",
                    help="the worst Q/DQ layouts of a grid of shapes against per-tensor")
    args = ap.parse_args(argv)
    global PREPARED
    PREPARED = args.prepared
    only = {s for s in args.only.split(",") if s}
    bench._QUARK_LIB = os.environ.get("QSIMD_QUARK_LIB")
    if args.quark and not bench._QUARK_LIB:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
        import quark_ops
        bench._QUARK_LIB = quark_ops.quark_library()
        if bench._QUARK_LIB is None:
            print(f"Quark's ops unavailable: {quark_ops.skip_reason()}", file=sys.stderr)
    if args.isa:
        qsimd.set_isa(args.isa)
    if args.sweep:
        return sweep(min(args.budget, 0.05))
    lines = [f"Machine: {bench.machine()}" + ("; Q/DQ rows: prepared operators" if PREPARED
                                              else ""), ""]
    head = ("| section | case | qsimd µs | baseline µs | ratio | bar | verdict | Quark µs | "
            "Quark/qsimd |")
    lines += [head, "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    over = 0
    for section, label, fns in rows(only - {"threads"} if only else only):
        if args.match and args.match not in label:
            continue
        if only == {"threads"}:
            break
        ours, base = fns[0], fns[1]
        quark = fns[2] if len(fns) > 2 else None
        tf = {"qsimd": ours, "base": base}
        if quark is not None:
            tf["quark"] = quark
        t = bench.median_times(tf, args.budget)
        ratio = t["qsimd"] / t["base"]
        bar = BARS[section]
        ok = ratio <= bar and ("quark" not in t or t["quark"] / t["qsimd"] >= 50)
        over += not ok
        cells = [section, label, f"{t['qsimd'] * 1e6:.1f}", f"{t['base'] * 1e6:.1f}",
                 f"{ratio:.2f}", f"{bar}", "ok" if ok else "OVER",
                 f"{t['quark'] * 1e6:.0f}" if "quark" in t else "–",
                 f"{t['quark'] / t['qsimd']:.0f}" if "quark" in t else "–"]
        row = "| " + " | ".join(cells) + " |"
        lines.append(row)
        print(row, flush=True)
    if not only or "threads" in only:
        two, one = threads_row(args.budget)
        ok = one / two >= 1.6
        over += not ok
        row = (f"| threads | 16M f32->u8 num_threads=2 vs 1 | {two * 1e6:.0f} | {one * 1e6:.0f} | "
               f"{one / two:.2f} (speed-up) | 1.6 | {'ok' if ok else 'OVER'} | – | – |")
        lines.append(row)
        print(row, flush=True)
    lines.append("")
    lines.append(f"{over} rows over their bar")
    print(lines[-1])
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
