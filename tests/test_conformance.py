"""The ONNX backend node test cases of QuantizeLinear, DequantizeLinear and
DynamicQuantizeLinear, rebuilt in memory (the onnx wheel ships no data files), run through
qsimd and compared bit-exactly with the expected outputs."""
import importlib

import numpy as np
import pytest
from onnx import helper, numpy_helper

import qsimd
from qtest_util import QUICK, STATS, assert_same

OPS = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear")
CASE_MODULES = ("quantizelinear", "dequantizelinear", "dynamicquantizelinear")
EXPECTED_COUNT = 33


def _collect():
    """The cases of the three operators. Importing their case modules registers them through
    onnx's own expect() exactly as collect_testcases() does, in 0.3 s instead of the 6 s that
    building all ~1900 node cases takes; test_case_list_is_complete checks that nothing is
    missed this way."""
    import onnx.backend.test.case.node as node_cases
    for name in CASE_MODULES:
        importlib.import_module(f"{node_cases.__name__}.{name}")
    return [c for c in node_cases._NodeTestCases if _is_ours(c)]


def _is_ours(case):
    ops = {n.op_type for n in case.model.graph.node}
    # the *_expanded variants are DynamicQuantizeLinear written as its function body
    return bool(ops & set(OPS)) or (case.name.startswith("test_dynamicquantizelinear")
                                    and case.name.endswith("_expanded"))


CASES = sorted(_collect(), key=lambda c: c.name)


def _arr(v):
    # TensorProto for the types NumPy lacks; ndarray or NumPy scalar (0-d) otherwise
    return np.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else numpy_helper.to_array(v)


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _params():
    for c in CASES:
        yield pytest.param(c, id=c.name)


def test_case_count():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)) == EXPECTED_COUNT, names
    assert sum(n.endswith("_expanded") for n in names) == 3


@pytest.mark.skipif(QUICK, reason="builds every ONNX node case (~6 s natively)")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # other operators' case generators
def test_case_list_is_complete():
    """collect_testcases() over all operators finds exactly the cases used here."""
    from onnx.backend.test.case.node import collect_testcases
    full = {c.name for c in collect_testcases() if _is_ours(c)}
    assert full == {c.name for c in CASES}


@pytest.mark.parametrize("case", list(_params()))
def test_node_case(case, isa):
    nodes = case.model.graph.node
    assert len(case.data_sets) >= 1
    for inputs, outputs in case.data_sets:
        ins = [_arr(v) for v in inputs]
        want = [_arr(v) for v in outputs]
        if len(nodes) == 1 and nodes[0].op_type in ("QuantizeLinear", "DequantizeLinear"):
            node = nodes[0]
            a = _attrs(node)
            kw = {k: a[k] for k in ("axis", "block_size") if k in a}
            if a.get("output_dtype"):
                kw["output_dtype"] = a["output_dtype"]   # an ONNX TensorProto code
            zp = ins[2] if len(ins) > 2 else None
            if node.op_type == "QuantizeLinear":
                if "saturate" in a:
                    kw["saturate"] = bool(a["saturate"])
                if a.get("precision"):
                    kw["precision"] = a["precision"]
                got = [qsimd.quantize_linear(ins[0], ins[1], zp, **kw)]
            else:
                got = [qsimd.dequantize_linear(ins[0], ins[1], zp, **kw)]
        else:
            # DynamicQuantizeLinear, or its expanded function body: same inputs and outputs
            assert len(ins) == 1 and len(want) == 3
            got = list(qsimd.dynamic_quantize_linear(ins[0]))
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{case.name} output {i}")
    STATS["conformance"] += 1
