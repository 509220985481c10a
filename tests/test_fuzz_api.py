"""A bounded run of the API fuzzer (tests/qfuzz.py): malformed and extreme calls to every
public function (the prepared operators against the plain ones, dynamic_quantize, MX / BFP /
quantize_mx, pack / unpack, PackedTensor, qsimd.onnx on mutated and corrupt models, tensors
and DLPack objects as arguments) must succeed with the right result, the same on every
instruction set, or raise TypeError / ValueError (MemoryError for impossible sizes) with a
message, and never write outside `out`.
Hypothesis drives the random choices (so a failure shrinks to a small case); a seeded loop
adds breadth cheaply. The campaign (.ci/fuzz.sh) runs the same cases ~100x longer."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import qfuzz
import qsimd
from qtest_util import QUICK


@pytest.fixture(autouse=True)
def _restore_settings():
    isa, threads = qsimd.get_isa(), qsimd.get_num_threads()
    yield
    qsimd.set_isa(None if isa == qsimd.available_isas()[-1] else isa)
    qsimd.set_num_threads(threads)


@settings(max_examples=60 if QUICK else 300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_api_fuzz_hypothesis(r):
    qfuzz.run_case(qfuzz.gen_case(r))


@pytest.mark.parametrize("seed", [1, 2])
def test_api_fuzz_seeded(seed):
    r = random.Random(seed)
    outcomes = {"ok": 0, "ok-broken": 0, "error": 0}
    for _ in range(300 if QUICK else 1500):
        outcomes[qfuzz.run_case(qfuzz.gen_case(random.Random(r.getrandbits(64))))] += 1
    # the generator must keep producing both kinds of call, or the run proves little
    assert outcomes["ok"] > 0.3 * sum(outcomes.values()), outcomes
    assert outcomes["error"] > 0.2 * sum(outcomes.values()), outcomes


def test_fuzzer_catches_a_write_outside_out(monkeypatch):
    """The canary check works: a quantize that also writes one byte past `out` is caught."""
    real = qsimd.quantize_linear

    def sloppy(*args, **kwargs):
        y = real(*args, **kwargs)
        out = kwargs.get("out")
        if out is not None and out.base is not None and out.ndim == 1 and out.size:
            raw = np.ndarray(out.nbytes + 1, np.uint8, buffer=out.base,
                             offset=out.__array_interface__["data"][0]
                             - out.base.__array_interface__["data"][0])
            raw[-1] ^= 0xFF
        return y

    monkeypatch.setattr(qsimd, "quantize_linear", sloppy)
    r = random.Random(5)
    for _ in range(20000):
        case = qfuzz.gen_case(random.Random(r.getrandbits(64)))
        out = case.kwargs.get("out")
        if case.op == "q" and case.out_guard is not None and isinstance(out, np.ndarray) \
                and out.ndim == 1 and out.size \
                and out.flags.c_contiguous and out.strides[0] == out.itemsize and case.valid:
            with pytest.raises(qfuzz.Fail, match="outside out"):
                qfuzz.run_case(case)
            return
    pytest.fail("no case with a guarded 1-D out= was generated")
