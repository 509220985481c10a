"""Results of 1 MiB and more come from a cache of recently freed result blocks
(qsimd.set_result_cache): a reused block must never leak old values into a new result, the
limits must hold, and the arrays must behave as NumPy's own."""
import gc

import ml_dtypes
import numpy as np
import pytest

import qsimd
from qsimd import _core
from qtest_util import assert_same, ref_dequantize, ref_quantize

MiB = 1 << 20


@pytest.fixture(autouse=True)
def fresh_cache():
    qsimd.set_result_cache(256 * MiB)
    yield
    qsimd.set_result_cache(256 * MiB)


def test_block_is_reused_and_fully_rewritten(isa):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(MiB) * 50).astype(np.float32)
    x2 = (rng.standard_normal(MiB) * 50).astype(np.float32)
    x3 = (rng.standard_normal(2 * MiB + 1) * 4).astype(np.float32)
    # the expectations first: a skip (no onnx) must not leave results behind for the cache
    want2 = ref_quantize(x2, np.float32(0.3), np.int8(0))
    want3 = qsimd.pack(ref_quantize(x3, np.float32(1), output_dtype=22))
    a = qsimd.quantize_linear(x, np.float32(0.3), np.int8(0))        # 1 MiB of int8
    addr = a.ctypes.data
    assert a.flags.owndata and a.base is None
    del a
    gc.collect()
    assert _core.result_cache_info()[1] == [MiB]
    b = qsimd.quantize_linear(x2, np.float32(0.3), np.int8(0))
    assert b.ctypes.data == addr                                   # the freed block again
    assert _core.result_cache_info()[1] == []
    assert_same(b, want2, "reused block")
    # a packed result in a reused block that held 0xff everywhere: its padding bits are zero
    junk = qsimd.quantize_linear(x3, np.float32(1), output_dtype="uint4", packed=True).data
    junk[:] = 0xFF
    addr = junk.ctypes.data
    del junk
    gc.collect()
    p = qsimd.quantize_linear(x3, np.float32(1), output_dtype="int4", packed=True).data
    assert p.ctypes.data == addr and p.nbytes == MiB + 1 and p[-1] >> 4 == 0
    assert_same(p, want3, "packed")


def test_dequantize_and_general_path(isa):
    rng = np.random.default_rng(5)
    q = rng.integers(0, 256, MiB // 2, dtype=np.uint8)
    want = ref_dequantize(q, np.array(0.25, np.float32), np.uint8(9))
    for _ in range(3):   # fast path (allocates 2 MiB), freed and reused each round
        assert_same(qsimd.dequantize_linear(q, np.float32(0.25), np.uint8(9)), want, "fast")
    for _ in range(3):   # general path (a reversed view is copied first)
        got = qsimd.dequantize_linear(q[::-1][::-1], np.float32(0.25), [9])
        assert_same(got, want, "general")
    bf = qsimd.dequantize_linear(q, np.float32(0.25), np.uint8(9), output_dtype="bfloat16")
    assert_same(bf, want.astype(ml_dtypes.bfloat16), "bfloat16")


def test_limits():
    x = np.ones(MiB, np.float32)
    qsimd.set_result_cache(3 * MiB)
    a = qsimd.quantize_linear(x, np.float32(1))                   # 1 MiB
    b = qsimd.dequantize_linear(a, np.float32(1))                 # 4 MiB: over the limit
    c = qsimd.quantize_linear(x, np.float32(1), output_dtype="int16")   # 2 MiB
    del a, b, c
    gc.collect()
    limit, sizes = _core.result_cache_info()
    assert limit == 3 * MiB and sorted(sizes) == [MiB, 2 * MiB]
    d = qsimd.quantize_linear(x[: MiB // 2], np.float32(1))       # 512 KiB: not cached
    del d
    e = qsimd.quantize_linear(np.ones(3 * MiB, np.float32), np.float32(1))   # 3 MiB
    del e
    gc.collect()   # the older block made room, the total stays within the limit
    assert sum(_core.result_cache_info()[1]) <= 3 * MiB
    qsimd.set_result_cache(0)
    assert _core.result_cache_info() == (0, [])
    f = qsimd.quantize_linear(x, np.float32(1))
    del f
    gc.collect()
    assert _core.result_cache_info() == (0, [])


def test_newest_block_is_kept():
    # an older block never keeps a newer, larger one out (else every call of a large size
    # would fault in fresh memory again)
    qsimd.set_result_cache(5 * MiB)
    small = qsimd.quantize_linear(np.ones(2 * MiB, np.float32), np.float32(1))   # 2 MiB
    del small
    gc.collect()
    big = qsimd.dequantize_linear(np.ones(MiB, np.uint8), np.float32(1))         # 4 MiB
    addr = big.ctypes.data
    del big
    gc.collect()
    assert _core.result_cache_info()[1] == [4 * MiB]
    again = qsimd.dequantize_linear(np.ones(MiB, np.uint8), np.float32(1))
    assert again.ctypes.data == addr


def test_setter_errors():
    with pytest.raises(ValueError, match="max_bytes"):
        qsimd.set_result_cache(-1)
    with pytest.raises(TypeError, match="max_bytes"):
        qsimd.set_result_cache(1.5)
    qsimd.set_result_cache(2**80)   # more than any machine: no limit in practice


def test_arrays_behave_as_numpy_arrays():
    y = qsimd.quantize_linear(np.ones((512, 4096), np.float32), np.float32(0.5))
    assert y.flags.owndata and y.flags.c_contiguous and y.flags.writeable
    y.resize((4096, 512), refcheck=False)    # reallocation through the same handler
    assert y.shape == (4096, 512) and int(y[0, 0]) == 2
    z = np.copy(y)
    assert z.flags.owndata and np.array_equal(z, y)


# --- the limit at import: QSIMD_RESULT_CACHE, else a default that fits the machine ---------

import os
import subprocess
import sys

from qsimd import _memory


def _run(code, **env):
    e = dict(os.environ)
    e.pop("QSIMD_RESULT_CACHE", None)
    e.update(env)
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=e, timeout=300)
    except OSError as err:   # an emulated interpreter (qemu-user without binfmt_misc)
        pytest.skip(f"cannot start another interpreter here: {err}")


def test_default_fits_the_machine():
    # a 1 GB board: 32 MiB; a 64 MiB one: off; a big server: 256 MiB at most
    assert _memory.default_result_cache(1 << 30) == 32 * MiB
    assert _memory.default_result_cache(64 * MiB) == 0
    assert _memory.default_result_cache(64 << 30) == 256 * MiB
    mem = _memory.physical_memory()
    limit = _memory.default_result_cache()
    if mem:
        assert 0 <= limit <= mem // 32
    assert limit <= 256 * MiB
    r = _run("import qsimd; print(qsimd.get_result_cache())")   # what import sets
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == limit


@pytest.mark.parametrize("text, want", [
    ("0", 0), ("8M", 8 * MiB), ("8m", 8 * MiB), ("8MiB", 8 * MiB), ("8 MB", 8 * MiB),
    ("512K", 512 << 10), ("1G", 1 << 30), ("1.5G", 3 << 29), ("123456", 123456),
    (" 64M ", 64 * MiB)])
def test_parse_size(text, want):
    assert _memory.parse_size(text) == want


@pytest.mark.parametrize("text", ["-1", "8X", "M", "eight", "8 M B", "0x10"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError, match="QSIMD_RESULT_CACHE"):
        _memory.parse_size(text)


def test_bad_environment_value_is_an_error_at_import():
    r = _run("import qsimd", QSIMD_RESULT_CACHE="lots")
    assert r.returncode != 0 and "QSIMD_RESULT_CACHE='lots' is not a size" in r.stderr


def test_page_size_for_madvise():
    page = _core.page_size()
    assert page >= 4096 and page & (page - 1) == 0
    if hasattr(os, "sysconf"):
        assert page == os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_env_limit_bounds_resident_memory():
    """QSIMD_RESULT_CACHE=8M: two freed 64M-element results (256 MiB each) are given back."""
    code = r"""
import gc, os, numpy as np, qsimd
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
q = np.ones(64 << 20, np.uint8)
qsimd.dequantize_linear(q[:1 << 20], np.float32(0.5))   # first-call setup outside the window
gc.collect()
before = rss()
a = qsimd.dequantize_linear(q, np.float32(0.5))
b = qsimd.dequantize_linear(q, np.float32(0.25), np.uint8(1))
assert a.nbytes == 256 << 20 and float(b[0]) == 0.0
del a, b
gc.collect()
print(qsimd.get_result_cache(), before, rss())
"""
    r = _run(code, QSIMD_RESULT_CACHE="8M")
    assert r.returncode == 0, r.stderr
    limit, before, after = map(int, r.stdout.split())
    assert limit == 8 * MiB
    assert after - before <= 16 * MiB, (before >> 20, after >> 20)
