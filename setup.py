"""Build of the qsimd extension.

Each kernel file is compiled with its own instruction-set flags, and only the current target
architecture's kernel files are built; the rest of the C core gets baseline flags, so the
wheel runs on any CPU of its architecture and picks a kernel table at run time.
"""
import os
import sysconfig

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "csrc"
CORE = [
    "csrc/cpu.c",
    "csrc/dispatch.c",
    "csrc/ops/common.c",
    "csrc/ops/quantize.c",
    "csrc/ops/dequantize.c",
    "csrc/ops/dynamic.c",
    "csrc/ops/parallel.c",
    "csrc/kernels/scalar.c",
]

# Per-file target flags: (gcc/clang, msvc).
X86_KERNELS = {
    "csrc/kernels/sse41.c": (["-msse4.1"], []),
    "csrc/kernels/avx2.c": (["-mavx2", "-mfma", "-mf16c"], ["/arch:AVX2"]),
    "csrc/kernels/avx512.c": (
        ["-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mavx2", "-mfma", "-mf16c"],
        ["/arch:AVX512"],
    ),
}
ARM_KERNELS = {"csrc/kernels/neon.c": ([], [])}


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
                      "-Wall", "-Wextra"]
            if os.environ.get("QSIMD_WERROR"):
                common.append("-Werror")
            if os.environ.get("QSIMD_SANITIZE"):
                common += ["-fsanitize=" + os.environ["QSIMD_SANITIZE"], "-fno-omit-frame-pointer", "-g"]
            if os.environ.get("QSIMD_OPT"):   # e.g. -O0: sanitized kernels compile 5x faster
                common.append(os.environ["QSIMD_OPT"])
        groups = [(CORE, [])] + [([f], flags[1] if msvc else flags[0]) for f, flags in KERNELS.items()]

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
        ext.extra_objects = objects + list(ext.extra_objects or [])
        super().build_extension(ext)
        # Ship the C core inside the package for C programs and extensions
        # (qsimd.get_include() / qsimd.get_library_dir()).
        pkg_dir = os.path.dirname(self.get_ext_fullpath(ext.name))
        self.compiler.create_static_lib(objects, "qsimd", output_dir=os.path.join(pkg_dir, "lib"))
        inc_dir = os.path.join(pkg_dir, "include")
        os.makedirs(inc_dir, exist_ok=True)
        self.copy_file(os.path.join(HERE, "csrc", "include", "qsimd.h"), inc_dir)

    def copy_extensions_to_source(self):
        """In-place and editable builds: the C library and header follow the module."""
        super().copy_extensions_to_source()
        built = os.path.join(self.build_lib, "qsimd")
        for sub in ("lib", "include"):
            src = os.path.join(built, sub)
            if os.path.isdir(src):
                self.copy_tree(src, os.path.join(HERE, "qsimd", sub))


define_macros = [("NPY_NO_DEPRECATED_API", "NPY_1_20_API_VERSION")] + KERNEL_MACROS
if os.name != "nt":
    define_macros.append(("_GNU_SOURCE", "1"))

depends = [os.path.join(root, f) for root, _, files in os.walk(CSRC) for f in files if f.endswith(".h")]
ext = Extension(
    "qsimd._core",
    sources=["qsimd/_core.pyx"],
    include_dirs=[np.get_include(), "csrc/include", "csrc"],
    define_macros=define_macros,
    depends=depends + CORE + list(KERNELS),
    extra_compile_args=[] if os.name == "nt" else
    ["-O2", "-ffp-contract=off"] + ([os.environ["QSIMD_OPT"]] if os.environ.get("QSIMD_OPT") else []),
    extra_link_args=(["-fsanitize=" + os.environ["QSIMD_SANITIZE"]] if os.environ.get("QSIMD_SANITIZE") else []),
)

setup(
    ext_modules=cythonize([ext], compiler_directives={"language_level": "3"}),
    cmdclass={"build_ext": BuildExt},
)
