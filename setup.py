"""Build of the qsimd extension.

Each kernel file is compiled with its own instruction-set flags, and only the current target
architecture's kernel files are built; the rest of the C core gets baseline flags, so the
wheel runs on any CPU of its architecture and picks a kernel table at run time.
"""
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "csrc"


def read_sources():
    """csrc/sources.txt (shared with CMake and the CI scripts): {group: [(file, flags)]}."""
    groups = {}
    with open(os.path.join(HERE, CSRC, "sources.txt")) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                groups.setdefault(words[0], []).append((CSRC + "/" + words[1], words[2:]))
    return groups


SOURCES = read_sources()
CORE = [f for f, _ in SOURCES["core"]]
ORT_GLUE = CSRC + "/ort/qsimd_ort.c"   # RegisterCustomOps, exported by the extension


def _has_mxbfp_api() -> bool:
    """Whether qsimd.h declares the MX / BFP C API that the glue's MX / BFP ops call."""
    with open(os.path.join(HERE, CSRC, "include", "qsimd.h")) as f:
        return "qsimd_mx_quantize_dequantize" in f.read()
# MSVC has no per-extension switches below AVX2; SSE4.1 code needs none on x64.
MSVC_FLAGS = {"avx2": ["/arch:AVX2"], "avx512": ["/arch:AVX512"]}


def _kernels(groups):
    return {f: (flags, MSVC_FLAGS.get(g, [])) for g in groups for f, flags in SOURCES[g]}


# QSIMD_UNSANITIZED=avx512,...: kernel groups a sanitized build leaves uninstrumented; CI names
# the tiers this CPU cannot run (instrumenting code that never runs costs minutes, finds nothing)
UNSANITIZED = {f for g in os.environ.get("QSIMD_UNSANITIZED", "").split(",") if g in SOURCES
               for f, _ in SOURCES[g]}


# Per-file target flags: (gcc/clang, msvc).
X86_KERNELS = _kernels(("sse41", "avx2", "avx512"))
ARM_KERNELS = _kernels(("neon",))

# Release builds (every wheel and sdist build) carry no debug info: CPython's CFLAGS have -g,
# which made the x86-64 wheel 24 MB (117 MiB installed) instead of ~1 MB. QSIMD_DEBUG=1
# keeps -g for developers; sanitizer builds (QSIMD_SANITIZE) keep theirs too.
DEBUG = bool(os.environ.get("QSIMD_DEBUG") or os.environ.get("QSIMD_SANITIZE"))
# The Cython module and the baseline C core are call-bound code: unpadded (~13 KB less of
# .text against a 1.0 MB wheel on x86-64); the kernel files keep gcc's alignment.
def _cc_is_gcc() -> bool:
    """Whether the C compiler is gcc (clang, Apple's "gcc" included, warns on -fno-align-jumps,
    -loops and -labels, an error under -Werror)."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    try:
        out = subprocess.run(cc + ["--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "clang" not in out.lower() and "free software foundation" in out.lower()


NOALIGN = ["-fno-align-functions", "-fno-align-jumps", "-fno-align-loops",
           "-fno-align-labels"] if os.name != "nt" and _cc_is_gcc() else []
NODEBUG = [] if DEBUG or os.name == "nt" else ["-g0"]


def target_arch():
    """The architecture being built for (honours cross builds via _PYTHON_HOST_PLATFORM)."""
    plat = sysconfig.get_platform().lower()
    if os.environ.get("ARCHFLAGS", "").strip() in ("-arch arm64", "-arch x86_64"):
        return "arm64" if "arm64" in os.environ["ARCHFLAGS"] else "x86"
    if any(a in plat for a in ("aarch64", "arm64")):
        return "arm64"
    if any(a in plat for a in ("x86_64", "amd64", "win32", "i686", "x86")) or plat.startswith("macosx") and "x86_64" in plat:
        return "x86"
    return "other"


def kernel_files():
    arch = target_arch()
    table = X86_KERNELS if arch == "x86" else ARM_KERNELS if arch == "arm64" else {}
    present = {f: v for f, v in table.items() if os.path.exists(os.path.join(HERE, f))}
    if present and len(present) != len(table):
        missing = sorted(set(table) - set(present))
        raise RuntimeError(f"incomplete kernel set for {arch}: missing {missing}")
    macro = {"x86": "QSIMD_HAVE_X86", "arm64": "QSIMD_HAVE_NEON"}.get(arch)
    return present, ([(macro, "1")] if present and macro else [])


KERNELS, KERNEL_MACROS = kernel_files()


class BuildExt(build_ext):
    """Compiles our C files first (C99, per-file ISA flags), then the Cython module."""

    def build_extension(self, ext):
        msvc = self.compiler.compiler_type == "msvc"
        if msvc:
            common = ["/O2", "/fp:precise"]
        else:
            common = ["-std=c99", "-O2", "-ffp-contract=off", "-fno-strict-aliasing",
                      "-fvisibility=hidden", "-Wall", "-Wextra"]
            if os.environ.get("QSIMD_WERROR"):
                common.append("-Werror")
            if os.environ.get("QSIMD_SANITIZE"):
                common += ["-fsanitize=" + os.environ["QSIMD_SANITIZE"], "-fno-omit-frame-pointer", "-g"]
            if os.environ.get("QSIMD_OPT"):   # e.g. -O0: sanitized kernels compile 5x faster
                common.append(os.environ["QSIMD_OPT"])
            common += NODEBUG   # last: after CPython's -g
        nosan = ["-fno-sanitize=all"] if os.environ.get("QSIMD_SANITIZE") else []
        groups = [(CORE, [] if msvc else NOALIGN)] + [
            ([f], flags[1] if msvc else flags[0] + (nosan if f in UNSANITIZED else []))
            for f, flags in KERNELS.items()]

        def compile_group(group):
            sources, flags = group
            return self.compiler.compile(
                sources,
                output_dir=self.build_temp,
                macros=ext.define_macros,
                include_dirs=ext.include_dirs,
                debug=self.debug,
                extra_postargs=common + flags,
                depends=ext.depends,
            )

        # The groups (core, each kernel file) compile on QSIMD_BUILD_JOBS threads, by default
        # one per CPU (the AVX2 and AVX-512 files take ~15 s each); MSVC's compiler object
        # initialises itself on first use, so it gets one.
        default_jobs = 1 if msvc else min(4, os.cpu_count() or 1)
        jobs = int(os.environ.get("QSIMD_BUILD_JOBS") or default_jobs)
        if jobs > 1:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(jobs) as pool:
                results = list(pool.map(compile_group, groups))
        else:
            results = [compile_group(g) for g in groups]
        objects = [o for r in results for o in r]
        # onnxruntime's custom-op entry point (qsimd.ort) lives in the extension, which so
        # shares the one copy of the core with it; it stays out of libqsimd.a
        glue = self.compiler.compile(
            [ORT_GLUE], output_dir=self.build_temp, include_dirs=ext.include_dirs,
            macros=ext.define_macros + ([("QSIMD_ORT_MXBFP", "1")] if _has_mxbfp_api() else []),
            debug=self.debug, extra_postargs=common + ([] if msvc else NOALIGN),
            depends=ext.depends)
        ext.extra_objects = objects + glue + list(ext.extra_objects or [])
        if not msvc:
            self._private_link(ext)
        super().build_extension(ext)
        # Ship the C core inside the package for C programs and extensions
        # (qsimd.get_include() / qsimd.get_library_dir()).
        pkg_dir = os.path.dirname(self.get_ext_fullpath(ext.name))
        lib_dir = os.path.join(pkg_dir, "lib")
        if msvc or not self._elf_static_lib(objects, lib_dir):
            self.compiler.create_static_lib(objects, "qsimd", output_dir=lib_dir)
        inc_dir = os.path.join(pkg_dir, "include")
        os.makedirs(inc_dir, exist_ok=True)
        self.copy_file(os.path.join(HERE, "csrc", "include", "qsimd.h"), inc_dir)

    def _private_link(self, ext):
        """The extension exports PyInit__core and RegisterCustomOps (onnxruntime's custom-op
        library entry point, qsimd.ort) only, binds its own copy of the core (no
        interposition by a libqsimd.so that a host process loaded) and carries no RUNPATH
        into the build machine's Python (some Pythons put -rpath in LDSHARED)."""
        linker = list(self.compiler.linker_so)
        drop = [i for i, a in enumerate(linker) if a.startswith("-Wl,-rpath") or a == "-rpath"]
        for i in reversed(drop):
            del linker[i:i + (2 if linker[i] == "-rpath" else 1)]
        self.compiler.linker_so = linker
        args = list(ext.extra_link_args or [])
        if sys.platform == "darwin":
            args += ["-Wl,-exported_symbol,_PyInit__core", "-Wl,-exported_symbol,_RegisterCustomOps"]
            args += [] if DEBUG else ["-Wl,-S,-x"]
        else:
            script = os.path.join(self.build_temp, "qsimd_exports.map")
            os.makedirs(self.build_temp, exist_ok=True)
            with open(script, "w") as f:
                f.write("{ global: PyInit__core; RegisterCustomOps; local: *; };\n")
            args += ["-Wl,--version-script=" + script] + ([] if DEBUG else ["-s"])
        ext.extra_link_args = args

    def _elf_static_lib(self, objects, lib_dir):
        """libqsimd.a as one relocatable object whose internal symbols (qs_*, qk_*: compiled
        with hidden visibility) are made local, so only the qsimd_* API is global and a C
        program's own symbols cannot collide with the core's; debug info stripped unless
        QSIMD_DEBUG. ELF toolchains only (False: the caller builds a plain archive)."""
        if sys.platform in ("darwin", "win32"):
            return False
        cc = [a for a in self.compiler.compiler_so if a not in ("ccache", "sccache")][0]
        prefix = os.path.basename(cc)
        for name in ("gcc", "clang", "cc"):   # aarch64-linux-gnu-gcc -> aarch64-linux-gnu-
            if prefix.endswith(name):
                prefix = prefix[: -len(name)]
                break
        tools = {}
        for tool in ("objcopy", "ar"):
            env = os.environ.get(tool.upper())
            cands = [env] if env else [prefix + tool, tool] if prefix.endswith("-") else [tool]
            found = next((shutil.which(c) for c in cands if c and shutil.which(c)), None)
            if not found:
                return False
            tools[tool] = found
        os.makedirs(lib_dir, exist_ok=True)
        merged = os.path.join(self.build_temp, "qsimd_core.o")
        lib = os.path.join(lib_dir, "libqsimd.a")
        try:
            subprocess.run([cc, "-r", "-nostdlib", "-o", merged] + objects, check=True)
            subprocess.run([tools["objcopy"], "--localize-hidden"]
                           + ([] if DEBUG else ["--strip-unneeded"]) + [merged], check=True)
            if os.path.exists(lib):
                os.remove(lib)
            subprocess.run([tools["ar"], "rcs", lib, merged], check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"qsimd: plain static library ({e})")
            return False
        return True

    def copy_extensions_to_source(self):
        """In-place and editable builds: the C library and header follow the module."""
        super().copy_extensions_to_source()
        built = os.path.join(self.build_lib, "qsimd")
        for sub in ("lib", "include"):
            src = os.path.join(built, sub)
            if os.path.isdir(src):
                self.copy_tree(src, os.path.join(HERE, "qsimd", sub))


# NumPy's C API as of the oldest NumPy the package admits (pyproject.toml: numpy>=1.25). Without
# it the default depends on the NumPy built against (1.21 for NumPy 2.2, which pip picks on
# CPython 3.10), and below 1.22 the headers do not declare PyDataMem_SetHandler: the extension
# then built with an implicit declaration and failed at import with an undefined symbol.
define_macros = [("NPY_NO_DEPRECATED_API", "NPY_1_20_API_VERSION"),
                 ("NPY_TARGET_VERSION", "NPY_1_25_API_VERSION")] + KERNEL_MACROS
if os.name != "nt":
    define_macros.append(("_GNU_SOURCE", "1"))

depends = [os.path.join(root, f) for root, _, files in os.walk(CSRC) for f in files if f.endswith(".h")]
ext = Extension(
    "qsimd._core",
    sources=["qsimd/_core.pyx", "qsimd/_result_cache.c"],
    include_dirs=[np.get_include(), "csrc/include", "csrc"],
    define_macros=define_macros,
    depends=depends + ["qsimd/_result_cache.h", "qsimd/_dlpack.h", ORT_GLUE] + CORE + list(KERNELS),
    extra_compile_args=[] if os.name == "nt" else
    # the Cython bridge at -Os on ARM: the aarch64 wheel's 1.2 MB budget (the kernels, in
    # their own objects, keep their flags)
    ["-Os" if target_arch() == "arm64" else "-O2", "-ffp-contract=off", "-fvisibility=hidden",
     # a C API function the headers do not declare must fail the build, not the import
     "-Werror=implicit-function-declaration"] + NOALIGN
    + ([os.environ["QSIMD_OPT"]] if os.environ.get("QSIMD_OPT") else []) + NODEBUG,
    extra_link_args=(["-fsanitize=" + os.environ["QSIMD_SANITIZE"]] if os.environ.get("QSIMD_SANITIZE") else []),
)

setup(
    ext_modules=cythonize([ext], compiler_directives={"language_level": "3"}),
    cmdclass={"build_ext": BuildExt},
)
