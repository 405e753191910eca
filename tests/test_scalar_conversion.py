"""Every op that takes a Python Scalar for a tensor's dtype converts it like c10's checked
conversion, op by op as PyTorch 2.13 does (the values below were read off torch 2.13.0):
negative integers wrap into uint8 except in constant_pad_nd, an integer dtype truncates a
float in range and refuses one out of range, any number is a bool, and float16 overflows
to inf only in ``full`` and indexing assignments."""
import numpy as np
import pytest

import fnx

MASK = fnx.tensor([True, False, False])
OVERFLOW = "value cannot be converted to type {} without overflow"


def _setitem(x, v):
    x[0] = v
    return x


def _setitem_mask(x, v):
    x[MASK] = v
    return x


# name -> fn(tensor of zeros, value): the converted value lands in element 0
OPS = {
    "full": lambda x, v: fnx.full((3,), v, dtype=x.dtype),
    "fill_": lambda x, v: x.fill_(v),
    "masked_fill": lambda x, v: x.masked_fill(MASK, v),
    "scatter": lambda x, v: x.scatter(0, fnx.tensor([0]), v),
    "setitem": _setitem,
    "setitem_mask": _setitem_mask,
    "pad": lambda x, v: fnx.nn.functional.pad(x, (1, 1), value=v),
}
ALL = tuple(OPS)
STRICT_UNSIGNED = ("pad",)
HALF_UNCHECKED = ("full", "setitem", "setitem_mask")


def _run(op, dtype, value):
    return OPS[op](fnx.zeros(3, dtype=dtype), value)


@pytest.mark.parametrize("op", ALL)
@pytest.mark.parametrize("value,dtype,expected", [
    (2.7, fnx.int32, 2), (-2.7, fnx.int32, -2), (2, fnx.bool, True), (0.5, fnx.bool, True),
    (127, fnx.int8, 127), (1.5 + 0j, fnx.int32, 1)])
def test_converts(op, value, dtype, expected):
    if op == "pad" and isinstance(value, complex):
        pytest.skip("PyTorch's pad takes a float value (a complex one is a TypeError)")
    assert _run(op, dtype, value)[0].item() == expected


@pytest.mark.parametrize("op", ALL)
def test_negative_ints_wrap_into_uint8_except_in_pad(op):
    if op in STRICT_UNSIGNED:
        with pytest.raises(RuntimeError, match=OVERFLOW.format("uint8_t")):
            _run(op, fnx.uint8, -1)
    else:
        assert _run(op, fnx.uint8, -1)[0].item() == 255


@pytest.mark.parametrize("op", ALL)
@pytest.mark.parametrize("value,dtype,cname", [
    (300, fnx.uint8, "uint8_t"), (-0.5, fnx.uint8, "uint8_t"), (255.9, fnx.uint8, "uint8_t"),
    (float("nan"), fnx.int64, "int64_t"), (1e40, fnx.float32, "float"), (128, fnx.int8,
    "int8_t")])
def test_overflow_is_refused(op, value, dtype, cname):
    with pytest.raises(RuntimeError, match=OVERFLOW.format(cname)):
        _run(op, dtype, value)


@pytest.mark.parametrize("op", ALL)
def test_float16_overflow(op):
    if op in HALF_UNCHECKED:
        assert _run(op, fnx.float16, 1e10)[0].item() == np.inf
    else:
        with pytest.raises(RuntimeError, match=OVERFLOW.format("c10::Half")):
            _run(op, fnx.float16, 1e10)


def test_refused_write_leaves_the_tensor_unchanged():
    x = fnx.arange(3, dtype=fnx.uint8)
    for write in (lambda: x.fill_(300), lambda: x.masked_fill_(MASK, -0.5),
                  lambda: _setitem(x, 256)):
        with pytest.raises(RuntimeError):
            write()
        assert x.tolist() == [0, 1, 2] and x._version == 0
