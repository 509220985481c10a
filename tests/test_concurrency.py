"""Many threads calling every operator on shared read-only inputs get exactly the
single-thread results, also while other threads change the process-wide settings
(set_isa, set_num_threads): a call runs on the ISA it started with, and every ISA gives the
same bits."""
import os
import random
import signal
import threading
import time
import warnings

import ml_dtypes
import numpy as np
import pytest

import qsimd
from qtest_util import QUICK

Q, D = qsimd.quantize_linear, qsimd.dequantize_linear
THREADS = 8


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _operations():
    rng = np.random.default_rng(99)
    x = _frozen((rng.standard_normal((3, 40, 33)) * 30).astype(np.float32))
    x1 = _frozen(x.reshape(-1))
    s40 = _frozen((rng.random(40) + 0.1).astype(np.float32))
    z40 = _frozen(rng.integers(-100, 100, 40).astype(np.int16))
    sb = _frozen((rng.random((3, 40, 9)) + 0.1).astype(np.float16))
    u8 = _frozen(rng.integers(0, 256, 3960).astype(np.uint8))
    i16 = _frozen(rng.integers(-3000, 3000, (3, 40, 33)).astype(np.int16))
    i4 = rng.integers(-8, 8, (3, 40, 33)).astype(ml_dtypes.int4)
    packed = qsimd.PackedTensor(_frozen(qsimd.pack(i4)), "int4", i4.shape)
    big = _frozen((rng.standard_normal(600_000) * 30).astype(np.float32))   # 2 threads split
    return {
        "quantize per-tensor (fast path)": lambda: Q(x1, np.float32(0.05), np.int8(3)),
        "quantize per-axis": lambda: Q(x, s40, z40, axis=1, output_dtype="int16"),
        "quantize blocked": lambda: Q(x, sb, axis=2, block_size=4, output_dtype="int4"),
        "quantize packed": lambda: Q(x, sb, axis=2, block_size=4, output_dtype="uint2",
                                     packed=True),
        "quantize threaded": lambda: Q(big, np.float32(0.1), output_dtype="uint8",
                                       num_threads=2),
        "dequantize (fast path)": lambda: D(u8, np.float32(0.1), np.uint8(128)),
        "dequantize per-axis": lambda: D(i16, s40, z40, axis=1, output_dtype="bfloat16"),
        "dequantize PackedTensor": lambda: D(packed, sb, axis=2, block_size=4),
        "dynamic": lambda: qsimd.dynamic_quantize_linear(x),
    }


def _bytes(result):
    if isinstance(result, qsimd.PackedTensor):
        return result.tobytes()
    if isinstance(result, tuple):
        return b"|".join(np.asarray(r).tobytes() for r in result)
    return result.tobytes()


def _hammer(ops, want, rounds, stop=None):
    """THREADS threads run every operation `rounds` times in random orders."""
    errors = []
    barrier = threading.Barrier(THREADS)

    def worker(seed):
        order = list(ops) * rounds
        random.Random(seed).shuffle(order)
        try:
            barrier.wait()
            for name in order:
                got = _bytes(ops[name]())
                if got != want[name]:
                    errors.append(f"{name}: differs from the single-thread result")
        except Exception as e:   # pragma: no cover - reported below
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    if stop is not None:
        stop.set()
    assert not any(t.is_alive() for t in threads), "a worker hung"
    return errors


@pytest.fixture
def restore_settings():
    isa, n = qsimd.get_isa(), qsimd.get_num_threads()
    yield
    qsimd.set_isa(None if isa == qsimd.available_isas()[-1] else isa)
    qsimd.set_num_threads(n)


def test_threads_share_read_only_inputs(isa):
    ops = _operations()
    want = {name: _bytes(fn()) for name, fn in ops.items()}
    errors = _hammer(ops, want, rounds=3 if QUICK else 12)
    assert not errors, errors[:5]


def test_settings_change_while_operations_run(restore_settings):
    """set_isa / set_num_threads are process-wide and safe to call at any time."""
    ops = _operations()
    qsimd.set_isa("scalar")
    want = {name: _bytes(fn()) for name, fn in ops.items()}
    isas = qsimd.available_isas()
    stop = threading.Event()
    seen, problems = set(), []

    def mutator():
        r = random.Random(1)
        while not stop.is_set():
            try:
                qsimd.set_isa(r.choice(isas + [None]))
                qsimd.set_num_threads(r.randint(1, 4))
                current = qsimd.get_isa()
                seen.add(current)
                if current not in isas or not 1 <= qsimd.get_num_threads() <= 4:
                    problems.append(f"settings read back as {current}, "
                                    f"{qsimd.get_num_threads()}")
            except Exception as e:   # pragma: no cover - reported below
                problems.append(f"{type(e).__name__}: {e}")

    m = threading.Thread(target=mutator)
    m.start()
    try:
        errors = _hammer(ops, want, rounds=2 if QUICK else 8, stop=stop)
    finally:
        stop.set()
        m.join(timeout=60)
    assert not errors and not problems, (errors[:5], problems[:5])
    assert seen <= set(isas) and seen, seen


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_thread_pool_after_fork():
    """The pool's threads do not survive fork(): a child that splits a call across threads
    must start its own, not wait forever for its parent's (checked with a deadline)."""
    x = (np.random.default_rng(5).standard_normal(600_000) * 30).astype(np.float32)
    want = Q(x, np.float32(0.05), np.int8(3), num_threads=1)
    np.testing.assert_array_equal(Q(x, np.float32(0.05), np.int8(3), num_threads=2), want)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # fork with threads (3.12+)
        pid = os.fork()
    if pid == 0:   # child: exit code 0 only if the split call finished with the right bytes
        code = 1
        try:
            got = Q(x, np.float32(0.05), np.int8(3), num_threads=2)
            code = 0 if np.array_equal(got, want) else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung in a multi-threaded call")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
