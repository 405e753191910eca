"""``fnx.finfo`` / ``fnx.iinfo``: each dtype's limits against IEEE 754 and two's-complement
arithmetic, worked out by hand here (not read from NumPy), and PyTorch's errors."""
import math

import pytest

import fnx

# (dtype, exponent bits, mantissa bits): max = (2 - 2**-m) * 2**(2**(e-1) - 1),
# eps = 2**-m, smallest normal = 2**(2 - 2**(e-1)); digits = floor(m * log10(2))
FLOATS = [(fnx.float16, 5, 10), (fnx.bfloat16, 8, 7), (fnx.float32, 8, 23),
          (fnx.float64, 11, 52)]


@pytest.mark.parametrize("dt,e,m", FLOATS, ids=lambda v: getattr(v, "name", str(v)))
def test_finfo_is_the_ieee_format_of_the_dtype(dt, e, m):
    fi = fnx.finfo(dt)
    bias = 2 ** (e - 1) - 1
    assert fi.bits == 1 + e + m
    assert fi.eps == 2.0 ** -m
    assert fi.max == (2 - 2.0 ** -m) * 2.0 ** bias and fi.min == -fi.max
    assert fi.tiny == fi.smallest_normal == 2.0 ** (1 - bias)
    assert fi.resolution == 10.0 ** -math.floor(m * math.log10(2))
    assert fi.dtype == dt.name
    assert all(type(v) is float for v in (fi.eps, fi.max, fi.min, fi.tiny, fi.resolution))


def test_finfo_of_a_complex_dtype_is_its_real_parts_and_none_is_the_default():
    c, f = fnx.finfo(fnx.complex64), fnx.finfo(fnx.float32)
    assert (c.bits, c.eps, c.max, c.tiny, c.dtype) == (f.bits, f.eps, f.max, f.tiny, "float32")
    assert fnx.finfo(fnx.complex128).dtype == "float64"
    assert fnx.finfo().dtype == "float32"
    fnx.set_default_dtype(fnx.float64)
    try:
        assert fnx.finfo().eps == 2.0 ** -52
    finally:
        fnx.set_default_dtype(fnx.float32)
    assert repr(fnx.finfo(fnx.float32)) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)")


@pytest.mark.parametrize("dt,bits,signed", [(fnx.uint8, 8, False), (fnx.int8, 8, True),
                                            (fnx.int16, 16, True), (fnx.int32, 32, True),
                                            (fnx.int64, 64, True)])
def test_iinfo_is_the_twos_complement_range(dt, bits, signed):
    ii = fnx.iinfo(dt)
    assert ii.bits == bits and ii.dtype == dt.name
    assert (ii.min, ii.max) == ((-2 ** (bits - 1), 2 ** (bits - 1) - 1) if signed
                                else (0, 2 ** bits - 1))
    # the limits are the dtype's: one past them wraps
    t = fnx.tensor([ii.max], dtype=dt)
    assert (t + 1).item() == ii.min


def test_finfo_min_masks_attention_scores_as_a_large_negative():
    # Hugging Face's extended attention mask: (1 - mask) * finfo(dtype).min
    scores = fnx.zeros(1, 3)
    mask = fnx.tensor([[1.0, 1.0, 0.0]])
    p = (scores + (1.0 - mask) * fnx.finfo(scores.dtype).min).softmax(-1)
    assert p.tolist() == [[0.5, 0.5, 0.0]]


def test_wrong_kinds_of_dtype_raise_type_error():
    with pytest.raises(TypeError, match="finfo.*floating point.*fnx.int64"):
        fnx.finfo(fnx.int64)
    with pytest.raises(TypeError, match="iinfo.*integer.*fnx.float32"):
        fnx.iinfo(fnx.float32)
    with pytest.raises(TypeError, match="fnx.bool is not supported by fnx.iinfo"):
        fnx.iinfo(fnx.bool)
    with pytest.raises(TypeError, match="must be fnx.dtype, not str"):
        fnx.finfo("float32")
