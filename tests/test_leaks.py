"""Memory stays flat over many small calls of every operator, error paths included
(tests/qleak.py; the campaign runs 1M calls and valgrind memcheck)."""
import os
import sys

import pytest

import qleak


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RSS from /proc")
def test_small_calls_keep_memory_flat():
    m = qleak.measure(20_000)
    # a leaked parameter block (256 entries, ~6 KiB) on 1 call in 19 grows RSS by ~12 MiB;
    # under ASan (.ci/asan.sh) freed memory waits in its quarantine, so RSS says nothing
    if not os.environ.get("QSIMD_UNDER_ASAN"):
        assert m["rss_growth"] < 4 * 2**20, m
    # a leaked Python object per call: +1000s of blocks
    assert m["block_growth"] < 1000, m
