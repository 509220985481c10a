#!/usr/bin/env python3
"""Size and symbol gate for built wheels (issue 12's budgets): fails when a wheel is over its
budget or ships what it should not.

  python .ci/size_gate.py WHEEL_OR_DIR...

Per wheel:
  - zipped and installed (uncompressed) size within the budget of its architecture:
    x86-64 1.5 MB / 5 MB, aarch64 (and arm64) 0.5 MB / 1.2 MB, others not budgeted;
  - no .debug_* section in any shipped ELF binary (extension, static library members);
  - the static library's defined global symbols all start with qsimd_ (`nm`);
  - the extension's dynamic symbol table exports exactly PyInit__core and RegisterCustomOps
    (onnxruntime's custom-op library entry point: qsimd.ort loads the extension itself).
The ELF checks read the files themselves (no binutils needed, any target architecture);
Mach-O and PE wheels get the size checks only. MB = 10**6 bytes.
"""
import io
import os
import struct
import sys
import zipfile

MB = 10**6
BUDGETS = {   # (zipped, installed)
    "x86_64": (1.5 * MB, 5 * MB),
    "aarch64": (0.5 * MB, 1.2 * MB),
}
# the extension's exports: its module init and onnxruntime's custom-op entry point (qsimd.ort)
EXT_EXPORTS = ["PyInit__core", "RegisterCustomOps"]
ARCH_ALIASES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def wheel_arch(name):
    tag = name[:-4].split("-")[-1].lower()   # e.g. manylinux_2_17_x86_64.manylinux2014_x86_64
    for alias, arch in ARCH_ALIASES.items():
        if tag.endswith(alias):
            return arch
    return None


class Elf:
    """The little an ELF file needs for these checks: section names, defined global symbols
    of .symtab / .dynsym."""

    def __init__(self, data):
        if data[:4] != b"\x7fELF":
            raise ValueError("not ELF")
        self.data = data
        self.is64 = data[4] == 2
        self.end = "<" if data[5] == 1 else ">"
        e = self.end
        if self.is64:
            self.shoff, = struct.unpack_from(e + "Q", data, 0x28)
            self.shentsize, self.shnum, self.shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
        else:
            self.shoff, = struct.unpack_from(e + "I", data, 0x20)
            self.shentsize, self.shnum, self.shstrndx = struct.unpack_from(e + "HHH", data, 0x2E)
        self.sections = [self._section(i) for i in range(self.shnum)]
        if self.sections:
            names = self.sections[self.shstrndx]
            for s in self.sections:
                s["name"] = self._str(names, s["name_off"])

    def _section(self, i):
        off = self.shoff + i * self.shentsize
        if self.is64:
            name, typ, _, _, offset, size, link, _, _, entsize = struct.unpack_from(
                self.end + "IIQQQQIIQQ", self.data, off)
        else:
            name, typ, _, _, offset, size, link, _, _, entsize = struct.unpack_from(
                self.end + "IIIIIIIIII", self.data, off)
        return dict(name_off=name, type=typ, offset=offset, size=size, link=link,
                    entsize=entsize)

    def _str(self, sec, off):
        start = sec["offset"] + off
        return self.data[start:self.data.index(b"\0", start)].decode("ascii", "replace")

    def section_names(self):
        return [s["name"] for s in self.sections]

    def defined_globals(self, kind):
        """Names of defined GLOBAL/WEAK symbols with default or protected visibility in
        .symtab (kind 2) or .dynsym (kind 11)."""
        out = []
        for s in self.sections:
            if s["type"] != kind or not s["entsize"]:
                continue
            strtab = self.sections[s["link"]]
            for j in range(1, s["size"] // s["entsize"]):
                off = s["offset"] + j * s["entsize"]
                if self.is64:
                    name, info, other, shndx = struct.unpack_from(self.end + "IBBH", self.data, off)
                else:
                    name, _, _, info, other, shndx = struct.unpack_from(
                        self.end + "IIIBBH", self.data, off)
                bind, vis = info >> 4, other & 3
                if bind in (1, 2) and shndx != 0 and vis in (0, 3):
                    out.append(self._str(strtab, name))
        return out


def ar_members(data):
    """(name, bytes) of a System V / GNU ar archive's object members."""
    if data[:8] != b"!<arch>\n":
        raise ValueError("not an ar archive")
    pos, out = 8, []
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().strip()
        size = int(header[48:58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        if name not in ("/", "//", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            out.append((name, body))
        pos += 60 + size + (size & 1)
    return out


def check_wheel(path):
    problems, notes = [], []
    name = os.path.basename(path)
    zipped = os.path.getsize(path)
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        installed = sum(i.file_size for i in infos)
        files = {i.filename: i for i in infos}
        arch = wheel_arch(name)
        notes.append(f"{zipped / MB:.3f} MB zipped, {installed / MB:.3f} MB installed "
                     f"({arch or 'no budget'})")
        if arch in BUDGETS:
            zb, ib = BUDGETS[arch]
            if zipped > zb:
                problems.append(f"wheel is {zipped / MB:.3f} MB, budget {zb / MB} MB")
            if installed > ib:
                problems.append(f"installs {installed / MB:.3f} MB, budget {ib / MB} MB")
        exts = [f for f in files if "/_core." in f and f.endswith((".so", ".pyd"))]
        libs = [f for f in files if f.endswith("/lib/libqsimd.a")]
        if not exts:
            problems.append("no qsimd._core extension in the wheel")
        for f in sorted(files):
            data = z.read(f) if f.endswith((".so", ".a")) else None
            if not data:
                continue
            notes.append(f"  {f}: {len(data) / MB:.3f} MB")
            if f.endswith(".so") and data[:4] == b"\x7fELF":
                elf = Elf(data)
                debug = [s for s in elf.section_names() if s.startswith((".debug", ".zdebug"))]
                if debug:
                    problems.append(f"{f} has debug sections {debug[:4]}")
                exports = sorted(set(elf.defined_globals(11)))
                if f in exts and exports != EXT_EXPORTS:
                    problems.append(f"{f} exports {len(exports)} symbols, not just "
                                    f"{' and '.join(EXT_EXPORTS)}: {exports[:8]}")
                elif f in exts:
                    notes.append(f"    exports: {', '.join(EXT_EXPORTS)} only")
            elif f in libs:
                members = ar_members(data)
                bad, debug = [], []
                for m, body in members:
                    if body[:4] != b"\x7fELF":
                        continue
                    elf = Elf(body)
                    debug += [s for s in elf.section_names() if s.startswith((".debug", ".zdebug"))]
                    bad += [s for s in elf.defined_globals(2) if not s.startswith("qsimd_")]
                if debug:
                    problems.append(f"{f} has debug sections {sorted(set(debug))[:4]}")
                if bad:
                    problems.append(f"{f} has {len(bad)} global symbols without the qsimd_ "
                                    f"prefix: {sorted(bad)[:8]}")
                elif members and members[0][1][:4] == b"\x7fELF":
                    notes.append(f"    {len(members)} object(s); every global symbol is qsimd_*")
    return problems, notes


def main(argv):
    wheels = []
    for a in argv:
        if os.path.isdir(a):
            wheels += [os.path.join(a, f) for f in sorted(os.listdir(a)) if f.endswith(".whl")]
        else:
            wheels.append(a)
    if not wheels:
        print("size_gate: no wheels given", file=sys.stderr)
        return 2
    failed = 0
    for w in wheels:
        problems, notes = check_wheel(w)
        print(f"{'FAIL' if problems else 'ok  '} {os.path.basename(w)}: " + notes[0])
        for n in notes[1:]:
            print("     " + n)
        for p in problems:
            print("     !! " + p)
        failed += bool(problems)
    print(f"size_gate: {len(wheels) - failed} wheel(s) within budget, {failed} over")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
