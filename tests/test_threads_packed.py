"""num_threads / set_num_threads, and dequantizing straight from packed bytes.

Threaded results are checked against the ONNX reference on one large case and against the
single-thread path (a different code path: the work is cut into pieces) on every layout;
the packed-input dequantize against the reference on unpacked data."""
import ml_dtypes
import numpy as np
import pytest

import qsimd
from qtest_util import ref_dequantize as reference_dequantize, ref_quantize as reference_quantize

# large enough that two threads really split (each needs >= 256K elements)
N_SPLIT = (1 << 19) + 1234 + 3


def _layouts(rng):
    """(x, scale, zero_point-or-None, axis, block_size) covering every cut rule."""
    x = (rng.standard_normal(N_SPLIT) * 40).astype(np.float32)
    yield x, np.float32(0.37), None, 1, 0                                    # per-tensor
    x3 = (rng.standard_normal((5, 7, 15000 + 1)) * 40).astype(np.float32)
    yield x3, (rng.random(7) + 0.1).astype(np.float32), None, 1, 0           # per-axis, odd inner
    yield x3, (rng.random(15001) + 0.1).astype(np.float32), None, -1, 0      # per-axis, last axis
    s_last = (rng.random((5, 7, -(-15001 // 33))) + 0.1).astype(np.float32)
    yield x3, s_last, None, 2, 33                                            # blocked, last axis
    s_mid = (rng.random((5, -(-7 // 3), 15001)) + 0.1).astype(np.float32)
    yield x3, s_mid, None, 1, 3                                              # blocked, inner axis
    # entries shorter than a vector: per-axis on axis 0 of few columns (one row of plain
    # blocks), blocks of 32 along an axis of 7 with an inner size of 3 (a K-row in registers)
    x2 = (rng.standard_normal((60000 + 1, 11)) * 40).astype(np.float32)
    yield x2, (rng.random(60001) + 0.1).astype(np.float32), None, 0, 0        # per-axis, 11 cols
    x4 = (rng.standard_normal((30001, 7, 3)) * 40).astype(np.float32)
    yield x4, (rng.random((30001, 1, 3)) + 0.1).astype(np.float32), None, 1, 32  # block > axis


@pytest.mark.parametrize("out_type,packed", [("uint8", False), ("int8", False), ("int16", False),
                                             ("int4", True), ("uint4", True), ("int2", True),
                                             ("uint2", False)])
def test_threads_match_one_thread(isa, out_type, packed):
    rng = np.random.default_rng(11)
    for x, s, zp, axis, bs in _layouts(rng):
        one = qsimd.quantize_linear(x, s, zp, axis=axis, block_size=bs, output_dtype=out_type,
                                    packed=packed, num_threads=1)
        for t in (2, 3, 8):
            many = qsimd.quantize_linear(x, s, zp, axis=axis, block_size=bs,
                                         output_dtype=out_type, packed=packed, num_threads=t)
            assert many.tobytes() == one.tobytes(), (t, x.shape, axis, bs)
        if not packed:
            q = one
            d1 = qsimd.dequantize_linear(q, s, axis=axis, block_size=bs, num_threads=1)
            d2 = qsimd.dequantize_linear(q, s, axis=axis, block_size=bs, num_threads=2)
            assert d1.tobytes() == d2.tobytes()


def test_threads_against_reference(isa):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(N_SPLIT) * 40).astype(np.float32)
    zp = np.array(3, np.int8)
    got = qsimd.quantize_linear(x, np.float32(0.25), zp, num_threads=2)
    np.testing.assert_array_equal(got, reference_quantize(x, np.float32(0.25), zp))
    y, s, z = qsimd.dynamic_quantize_linear(x)
    qsimd.set_num_threads(2)
    try:
        y2, s2, z2 = qsimd.dynamic_quantize_linear(x)
    finally:
        qsimd.set_num_threads(1)
    assert y.tobytes() == y2.tobytes() and s == s2 and z == z2


def test_set_num_threads():
    assert qsimd.get_num_threads() == 1
    qsimd.set_num_threads(4)
    try:
        assert qsimd.get_num_threads() == 4
    finally:
        qsimd.set_num_threads(1)
    for bad in (0, -1, 65):
        with pytest.raises(ValueError, match="num_threads"):
            qsimd.set_num_threads(bad)
    with pytest.raises(TypeError, match="num_threads"):
        qsimd.set_num_threads(2.0)
    with pytest.raises(ValueError, match="num_threads"):
        qsimd.quantize_linear(np.zeros(4, np.float32), 1.0, num_threads=0)
    with pytest.raises(ValueError, match="num_threads"):
        qsimd.dequantize_linear(np.zeros(4, np.uint8), 1.0, num_threads=100)


@pytest.mark.parametrize("dtype", ["int4", "uint4", "int2", "uint2"])
@pytest.mark.parametrize("out", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_dequantize_packed_input(isa, dtype, out):
    rng = np.random.default_rng(3)
    dt = np.dtype(getattr(ml_dtypes, dtype))
    info = ml_dtypes.iinfo(dt)
    for shape, axis, bs, sshape in (((37,), 0, 0, ()), ((6, 9), 1, 0, (9,)),
                                    ((6, 9), 0, 0, (6,)), ((5, 11), 1, 4, (5, 3)),
                                    ((7, 3, 5), 1, 2, (7, 2, 5)), ((0, 3), 1, 0, ())):
        x = rng.integers(info.min, info.max + 1, shape).astype(dt)
        s = (rng.random(sshape) + 0.05).astype(out)
        zp = rng.integers(info.min, info.max + 1, sshape).astype(dt)
        packed = qsimd.PackedTensor(qsimd.pack(x), dtype, shape)
        got = qsimd.dequantize_linear(packed, s, zp, axis=axis, block_size=bs)
        want = qsimd.dequantize_linear(x, s, zp, axis=axis, block_size=bs)
        assert got.dtype == want.dtype and got.shape == tuple(shape)
        assert got.tobytes() == want.tobytes()
        if x.size and out == np.float32:
            ref = reference_dequantize(x, s, zp, axis=axis, block_size=bs)
            np.testing.assert_array_equal(got, ref)


def test_packed_round_trip_from_quantize(isa):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((3, 50)) * 3).astype(np.float32)
    pt = qsimd.quantize_linear(x, np.float32(0.5), output_dtype="int4", packed=True)
    assert pt.dtype == ml_dtypes.int4 and pt.shape == x.shape
    got = qsimd.dequantize_linear(pt, np.float32(0.5))
    q = qsimd.quantize_linear(x, np.float32(0.5), output_dtype="int4")
    np.testing.assert_array_equal(got, q.astype(np.float32) * np.float32(0.5))


def test_packed_input_errors():
    with pytest.raises(ValueError, match="x.data has 2 bytes"):
        qsimd.dequantize_linear(qsimd.PackedTensor(np.zeros(2, np.uint8), "int4", (5,)), 1.0)
    with pytest.raises(TypeError, match="x.dtype"):
        qsimd.dequantize_linear(qsimd.PackedTensor(np.zeros(2, np.uint8), "int8", (2,)), 1.0)
    with pytest.raises(TypeError, match="x.data"):
        qsimd.dequantize_linear(qsimd.PackedTensor(np.zeros(2, np.int16), "int4", (4,)), 1.0)
    with pytest.raises(ValueError, match="negative"):
        qsimd.dequantize_linear(qsimd.PackedTensor(np.zeros(2, np.uint8), "int4", (-4,)), 1.0)
