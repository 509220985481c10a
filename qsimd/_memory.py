"""The result cache's limit at import: QSIMD_RESULT_CACHE, else a default that fits the
machine (at most 1/32 of the memory this process may use, at most 256 MiB, off below 4 MiB).
"""
from __future__ import annotations

import os
import re
import sys

MiB = 1 << 20
CAP = 256 * MiB        # more buys nothing: two blocks of the largest results anyone reuses
MIN_USEFUL = 4 * MiB   # below this the two blocks kept are too small to pay: off
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'8M', '512k', '1.5G', '8MiB', '8MB', '1048576', '0' -> bytes (K/M/G/T are powers of
    1024). ValueError for anything else."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise ValueError(f"QSIMD_RESULT_CACHE={text!r} is not a size: use bytes with an optional "
                         f"K, M or G suffix (powers of 1024), e.g. 64M; 0 turns the cache off")
    number, unit = m.group(1), _UNITS[m.group(2).lower()]
    n = int(float(number) * unit) if "." in number else int(number) * unit
    return min(n, sys.maxsize)   # fits size_t everywhere


def _cgroup_limit():
    """A container's memory limit (cgroup v2, then v1), or None."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                v = f.read().strip()
        except OSError:
            continue
        if v.isdigit() and int(v) < 1 << 60:   # "max" or v1's huge "unlimited" value
            return int(v)
    return None


def physical_memory():
    """Bytes of memory this process may use: the machine's, or its container's limit when
    lower. None when unknown."""
    total = None
    if sys.platform == "win32":
        import ctypes

        class MemoryStatusEx(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                        ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                        ("ullTotalPageFile", ctypes.c_ulonglong),
                        ("ullAvailPageFile", ctypes.c_ulonglong),
                        ("ullTotalVirtual", ctypes.c_ulonglong),
                        ("ullAvailVirtual", ctypes.c_ulonglong),
                        ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]
        st = MemoryStatusEx()
        st.dwLength = ctypes.sizeof(st)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(st)):
            total = st.ullTotalPhys
    else:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            total = None
        limit = _cgroup_limit()
        if limit is not None and (total is None or limit < total):
            total = limit
    return total if total and total > 0 else None


def default_result_cache(memory=None) -> int:
    """1/32 of the memory, in whole MiB, at most 256 MiB; 0 (off) below 4 MiB or when the
    memory is unknown."""
    memory = physical_memory() if memory is None else memory
    if not memory:
        return 0
    limit = min(CAP, memory // 32) // MiB * MiB
    return limit if limit >= MIN_USEFUL else 0


def result_cache_at_import() -> int:
    text = os.environ.get("QSIMD_RESULT_CACHE", "")
    if text.strip():
        return parse_size(text)
    return default_result_cache()
