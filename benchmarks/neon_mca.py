#!/usr/bin/env python3
"""Cycles per element of the NEON kernels' inner loops, by LLVM's scheduling models, on x86.

Compiles csrc/kernels/neon.c to assembly with the flags setup.py builds it with (by
aarch64-linux-gnu-gcc), cuts the innermost loop of each kernel below out of its table
function, runs llvm-mca for each CPU model and divides the total cycles by the elements the
loop handles (iterations x elements per iteration, counted from the loop's loads/stores).
The MX row (csrc/kernels/mxbfp_neon.c, its own flags from csrc/sources.txt) is a block of 32
channels of an NCHW tensor, int8 elements: the sum of its two passes over the block's rows,
the lane-wise max of |x| and the quantize-dequantize of each vector. The frame row
(csrc/ops/chain_neon.c) is a camera frame's input boundary: uint8 HWC pixels through a
normalisation chain to int8 NCHW codes, each channel's codes a line (per output element).

    python benchmarks/neon_mca.py                 table
    python benchmarks/neon_mca.py --json out.json also writes {kernel: {cpu: cycles/element}}
    python benchmarks/neon_mca.py --json          JSON on stdout instead of the table
    options: --cc, --mca, --source, --cpus, --iterations, --show (print the loops cut out)

Needs the Debian packages gcc-aarch64-linux-gnu and llvm-22 (llvm-mca-22). The numbers are
models, not measurements: LLVM's scheduling models for in-order Cortex-A55 and out-of-order
Neoverse N1 / V1 (N1 stands in for Cortex-A76, Raspberry Pi 5). They rank loops well; they
say nothing about memory bandwidth.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# setup.py's flags for the kernel files (BuildExt.build_extension) and the NEON macro
FLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-fno-strict-aliasing", "-fvisibility=hidden",
         "-DQSIMD_HAVE_NEON"]
CPUS = ["cortex-a55", "neoverse-n1", "neoverse-v1"]


def loop_bytes(lines, kinds):
    """Bytes moved by the vector loads ('ld') or stores ('st') of a loop body."""
    total = 0
    for ln in lines:
        m = re.match(r"\s*(ldp|ldr|ld1|stp|str|st1|ldnp|stnp)\s+(.*)", ln)
        if not m or not m.group(1).startswith(kinds):
            continue
        op, args = m.group(1), m.group(2)
        if "[sp" in args:   # spills and parameter copies, not data
            continue
        if op in ("ld1", "st1"):
            regs = re.search(r"\{([^}]*)\}", args).group(1)
            lane = re.match(r"\s*v\d+\.([bhsd])\s*$", regs)   # {v0.s}[1]: one element
            if lane:
                total += {"b": 1, "h": 2, "s": 4, "d": 8}[lane.group(1)]
                continue
            shape = re.findall(r"v\d+\.(\d+)([bhsd])", regs)
            if "-" in regs:   # {v0.16b - v3.16b}
                a, b = [int(x) for x in re.findall(r"v(\d+)", regs)[:2]]
                nregs = b - a + 1
            else:
                nregs = len(shape)
            lanes, t = shape[0]
            total += nregs * int(lanes) * {"b": 1, "h": 2, "s": 4, "d": 8}[t]
        else:
            reg = args.split(",")[0].strip()
            size = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "x": 8, "w": 4}[reg[0]]
            total += size * (2 if op.endswith("p") else 1)
    return total


def functions(asm):
    """{name: [lines]} of the assembly's functions."""
    out, cur, name = {}, None, None
    for ln in asm.splitlines():
        m = re.match(r"^([A-Za-z_][\w.]*):", ln)
        if m and not ln.startswith(".L"):
            name, cur = m.group(1), []
            out[name] = cur
            continue
        if cur is not None:
            if re.match(r"\s*\.size\s+" + re.escape(name) + r"\b", ln):
                cur = None
                continue
            cur.append(ln)
    return out


BRANCH = re.compile(r"\s*(b|b\.?(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)|cbn?z|tbn?z)"
                    r"\s+(?:[^,]+,\s*)*(\.L\w+)\s*$")


def innermost_loops(body):
    """Loops of a function: (first line, last line) from a label to the backward branch to it,
    keeping those with no other loop inside."""
    labels = {}
    loops = []
    for i, ln in enumerate(body):
        m = re.match(r"^(\.L\w+):", ln)
        if m:
            labels[m.group(1)] = i
        m = BRANCH.match(ln)
        if m and m.group(2) in labels:
            loops.append((labels[m.group(2)], i))
    inner = [l for l in loops
             if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]
    return sorted(set(inner))


def instructions(lines):
    """The loop as llvm-mca reads it: labels and instructions, no directives or comments."""
    out = []
    for ln in lines:
        s = ln.split("//")[0].rstrip()
        if not s.strip() or re.match(r"\s*\.(?!L)", s):
            continue
        out.append(s)
    return out


def has(lines, pattern):
    return any(re.match(r"\s*(" + pattern + r")\b", ln) for ln in lines)


def straight(loops):
    """Loops without branches inside (one label): the steady-state loops of a kernel."""
    return [l for l in loops if sum(1 for ln in l if ln.startswith(".L")) == 1] or loops


# kernel: (table function, predicate on the loop, elements per iteration from the loop)
def pick_quant(loops):
    """The per-tensor loop: with the reciprocal form (fused multiply-adds) if any loop has
    them -- the one-positive-scale form clamps x with FMIN, the per-lane form does not --
    else the divides; the most elements per iteration, then the fewest loads."""
    conv = [l for l in straight(loops) if has(l, "fcvtns")]
    fma = [l for l in conv if has(l, "fmla|fmls")]
    cand = [l for l in fma if has(l, "fmin")] or fma or [l for l in conv if has(l, "fdiv")]
    return min(cand, key=lambda l: (-loop_bytes(l, "st"), loop_bytes(l, "ld"), len(l))) \
        if cand else None


def pick_dequant(loops):
    """The per-tensor uint8 loop: products stored as float32, no parameters reloaded (the
    fewest loads for its stores); the most elements per iteration. (Builds with the sign as
    a constant of the loop had one without the EOR that flips signed codes: that one.)"""
    cand = [l for l in straight(loops) if has(l, "fmul") and loop_bytes(l, "st") >= 64]
    cand = [l for l in cand if not has(l, "eor|sshl")] or cand
    return min(cand, key=lambda l: (-loop_bytes(l, "st"), loop_bytes(l, "ld"), len(l))) \
        if cand else None


def pick_tile(loops):
    """The row-tile loop (driver.h's qd_qtile, layouts whose entries vary along rows): one
    column of 4 rows per iteration, its parameters loaded once for the 4 rows, each row's
    codes stored by lane."""
    cand = [l for l in loops if has(l, "fcvtns") and has(l, "fmla|fmls") and
            any(re.match(r"\s*st1\s+\{v\d+\.s\}\[", ln) for ln in l)]
    return min(cand, key=len) if cand else None


def pick_minmax(loops):
    cand = [l for l in straight(loops) if loop_bytes(l, "ld") >= 64]
    return min(cand, key=len) if cand else None


KERNELS = {
    "q_f32_u8": ("neon_q_f32_f32_b8", pick_quant,
                 lambda l: loop_bytes(l, "st")),            # one byte per element
    "q_f32_u8_rows": ("neon_q_f32_f32_b8", pick_tile,
                      lambda l: loop_bytes(l, "st")),       # 4 rows x 4 bytes
    "dq_u8_f32": ("neon_d_b8_f32", pick_dequant,
                  lambda l: loop_bytes(l, "st") // 4),       # one float per element
    "minmax_f32": ("neon_minmax", pick_minmax, lambda l: loop_bytes(l, "ld") // 4),
}


def pick_mx_max(loops):
    """The first pass of a vertical MX tile: one vector of a row per iteration, loads and
    unsigned maxima, nothing stored."""
    cand = [l for l in straight(loops) if has(l, "umax") and loop_bytes(l, "ld") >= 16
            and loop_bytes(l, "st") == 0 and not has(l, "frintz|fmul")]
    return min(cand, key=len) if cand else None


def pick_mx_apply(loops):
    """The second pass: the int8 element step (frintz of a fused multiply-add), one vector of
    a row per iteration."""
    cand = [l for l in straight(loops) if has(l, "frintz") and has(l, "fmla")
            and loop_bytes(l, "st") >= 16]
    return min(cand, key=lambda l: (-loop_bytes(l, "ld"), len(l))) if cand else None


# MX: (function, [(loop picker, elements per iteration)], source, flags group)
MX_KERNELS = {
    "mx_i8_ch32": ("mv_run_i8r0", [(pick_mx_max, lambda l: loop_bytes(l, "ld") // 4),
                                    (pick_mx_apply, lambda l: loop_bytes(l, "st") // 4)]),
}


def pick_frame(loops):
    """The three-channel HWC -> CHW loop of lines: a de-interleaving load, widening
    multiply-adds, saturating narrows; uint8 pixels (no EOR flipping signed ones)."""
    cand = [l for l in straight(loops) if has(l, "ld3") and has(l, "smlal")
            and not has(l, "eor")]
    return min(cand, key=len) if cand else None


# other files: (file, function prefix ('' any), loop picker, elements per iteration)
FILE_KERNELS = {
    "frame_u8_i8": ("ops/chain_neon.c", "", pick_frame, lambda l: loop_bytes(l, "st")),
}


def mx_flags(name="kernels/mxbfp_neon.c"):
    """csrc/sources.txt's flags for a NEON file."""
    with open(os.path.join(ROOT, "csrc", "sources.txt")) as f:
        for ln in f:
            parts = ln.split()
            if len(parts) >= 2 and parts[1] == name:
                return parts[2:]
    return []


def tool(name, candidates):
    for c in ([name] if name else []) + candidates:
        if c and shutil.which(c):
            return c
    sys.exit("neon_mca.py: none of %s found (apt-get install -y gcc-aarch64-linux-gnu llvm-22)"
             % ", ".join([name] if name else candidates))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", metavar="FILE", nargs="?", const="-",
                    help="write the results as JSON to FILE (alone or '-': stdout, no table)")
    ap.add_argument("--cc", help="aarch64 C compiler (aarch64-linux-gnu-gcc)")
    ap.add_argument("--mca", help="llvm-mca (llvm-mca-22)")
    ap.add_argument("--source", default=os.path.join(ROOT, "csrc", "kernels", "neon.c"))
    ap.add_argument("--cpus", default=",".join(CPUS))
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--show", action="store_true", help="print each loop cut out")
    a = ap.parse_args()
    cc = tool(a.cc, ["aarch64-linux-gnu-gcc"])
    mca = tool(a.mca, ["llvm-mca-22"])
    cpus = [c for c in a.cpus.split(",") if c]
    inc = ["-I" + os.path.join(ROOT, "csrc", d) for d in ("", "include", "kernels")]
    asm = subprocess.run([cc] + FLAGS + inc + ["-S", "-o", "-", a.source], check=True,
                         capture_output=True, text=True).stdout
    funcs = functions(asm)
    mx_src = os.path.join(ROOT, "csrc", "kernels", "mxbfp_neon.c")
    mx_asm = subprocess.run([cc] + FLAGS + mx_flags() + inc + ["-S", "-o", "-", mx_src],
                            check=True, capture_output=True, text=True).stdout
    mx_funcs = functions(mx_asm)
    results, per_iter = {}, {}

    def mca_cycles(tmp, name, loop, n):
        path = os.path.join(tmp, name + ".s")
        with open(path, "w") as f:
            f.write("\n".join(loop) + "\n")
        out = {}
        for cpu in cpus:
            rep = subprocess.run([mca, "-mtriple=aarch64", "-mcpu=" + cpu,
                                  "-iterations=%d" % a.iterations, path], check=True,
                                 capture_output=True, text=True).stdout
            cyc = int(re.search(r"Total Cycles:\s+(\d+)", rep).group(1))
            out[cpu] = cyc / (a.iterations * n)
        return out

    def measure(kernel, where, loop, elems):
        """A kernel's row: loop (from where) through llvm-mca per CPU model."""
        if loop is None:
            sys.exit("neon_mca.py: no inner loop of %s fits %s" % (where, kernel))
        n = elems(loop)
        per_iter[kernel] = n
        if a.show:
            print("# %s (%s): %d instructions, %d elements per iteration" %
                  (kernel, where, len(loop) - 1, n), file=sys.stderr)
            print("\n".join(loop), file=sys.stderr)
        results[kernel] = {cpu: round(v, 3) for cpu, v in mca_cycles(tmp, kernel, loop, n).items()}

    with tempfile.TemporaryDirectory() as tmp:
        for kernel, (fn, pick, elems) in KERNELS.items():
            if fn not in funcs:
                sys.exit("neon_mca.py: %s not in the assembly of %s" % (fn, a.source))
            # with the parts gcc splits off (name.part.0: the body behind the entry's checks)
            body = [ln for f in sorted(funcs) if f == fn or f.startswith(fn + ".")
                    for ln in funcs[f]]
            loops = [instructions(body[s:e + 1]) for s, e in innermost_loops(body)]
            measure(kernel, fn, pick(loops), elems)
        for kernel, (fn, passes) in MX_KERNELS.items():
            if fn not in mx_funcs:
                sys.exit("neon_mca.py: %s not in the assembly of %s" % (fn, mx_src))
            body = mx_funcs[fn]
            loops = [instructions(body[s:e + 1]) for s, e in innermost_loops(body)]
            total = {cpu: 0.0 for cpu in cpus}
            per_iter[kernel] = 0
            for i, (pick, elems) in enumerate(passes):
                loop = pick(loops)
                if loop is None:
                    sys.exit("neon_mca.py: no loop of %s fits %s pass %d" % (fn, kernel, i + 1))
                n = elems(loop)
                per_iter[kernel] = max(per_iter[kernel], n)
                if a.show:
                    print("# %s pass %d (%s): %d instructions, %d elements per iteration" %
                          (kernel, i + 1, fn, len(loop) - 1, n), file=sys.stderr)
                    print("\n".join(loop), file=sys.stderr)
                for cpu, v in mca_cycles(tmp, "%s_%d" % (kernel, i), loop, n).items():
                    total[cpu] += v
            results[kernel] = {cpu: round(v, 3) for cpu, v in total.items()}
        for kernel, (name, prefix, pick, elems) in FILE_KERNELS.items():
            src = os.path.join(ROOT, "csrc", name)
            fasm = subprocess.run([cc] + FLAGS + mx_flags(name) + inc + ["-S", "-o", "-", src],
                                  check=True, capture_output=True, text=True).stdout
            loops = []
            for fn, body in functions(fasm).items():
                if fn.startswith(prefix):
                    loops += [instructions(body[s:e + 1]) for s, e in innermost_loops(body)]
            measure(kernel, name, pick(loops), elems)
    if a.json and a.json != "-":
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    if a.json == "-":
        json.dump(results, sys.stdout, indent=1)
        print()
        return
    print("cycles per element (llvm-mca, %s, %s)" % (os.path.basename(mca),
                                                     os.path.basename(cc)))
    print("%-14s %9s " % ("kernel", "elem/iter") + " ".join("%12s" % c for c in cpus))
    for kernel, row in results.items():
        print("%-14s %9d " % (kernel, per_iter[kernel]) +
              " ".join("%12.2f" % row[c] for c in cpus))


if __name__ == "__main__":
    main()
