import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import qsimd
from qtest_util import QUICK, STATS

# Moderate example counts by default; QSIMD_TEST_QUICK=1 (qemu, ~7x slower) cuts them ~5x.
# deadline=None: timing under emulation or a loaded machine must not fail a test.
# function_scoped_fixture: the `isa` fixture is meant to stay fixed across the examples.
settings.register_profile(
    "qsimd", max_examples=20 if QUICK else 100, deadline=None, derandomize=False,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("QSIMD_HYPOTHESIS_PROFILE", "qsimd"))

# onnx.reference divides with NumPy's promotion, and the contract is its quotient under NumPy
# 2's rule (NEP 50: by type). NumPy 1.x promotes 0-d arrays by value (float16 x divided by a
# 0-d float32 scale stays float16), which would change the expectations, not qsimd: the tests
# use NEP 50 there too.
if int(np.__version__.split(".")[0]) < 2 and hasattr(np, "_set_promotion_state"):
    np._set_promotion_state("weak")


def _test_isas():
    """Every ISA this machine runs; QSIMD_TEST_ISAS=a,b narrows that (e.g. a second emulated
    CPU model only needs the NEON-parametrised tests)."""
    isas = qsimd.available_isas()
    wanted = os.environ.get("QSIMD_TEST_ISAS")
    if wanted:
        isas = [i for i in isas if i in wanted.split(",")]
    return isas


@pytest.fixture(params=_test_isas())
def isa(request):
    """Run the test on one instruction set; every ISA the machine can run is a parameter."""
    previous = qsimd.get_isa()
    qsimd.set_isa(request.param)
    assert qsimd.get_isa() == request.param
    try:
        yield request.param
    finally:
        # the best ISA means "automatic"; anything else was forced (QSIMD_ISA) and stays forced
        qsimd.set_isa(None if previous == qsimd.available_isas()[-1] else previous)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"qsimd: {STATS['diff_cases']} differential cases, {STATS['diff_elements']} elements "
        f"compared bit-exactly with onnx.reference; {STATS['conformance']} conformance "
        f"runs passed; ISAs {qsimd.available_isas()}{' (QUICK)' if QUICK else ''}")
