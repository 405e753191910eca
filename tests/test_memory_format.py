"""Memory formats (fnx.channels_last and kin) and PyTorch's constants: strides computed by
hand, contiguity answers, values unchanged, modules laid out, bad input."""
import math
import pickle

import numpy as np
import pytest

import fnx


def test_constants():
    assert fnx.inf == math.inf and math.isnan(fnx.nan) and fnx.pi == math.pi and fnx.e == math.e
    x = fnx.arange(3)
    assert tuple(x[:, fnx.newaxis].shape) == (3, 1)
    assert fnx.tensor([1.0]).masked_fill(fnx.tensor([True]), -fnx.inf).item() == -math.inf


def test_formats_are_named_singletons():
    assert repr(fnx.channels_last) == "fnx.channels_last"
    assert isinstance(fnx.contiguous_format, fnx.memory_format)
    for f in (fnx.contiguous_format, fnx.channels_last, fnx.channels_last_3d,
              fnx.preserve_format):
        assert pickle.loads(pickle.dumps(f)) is f


@pytest.mark.parametrize("shape, fmt, strides", [
    ((2, 3, 4, 5), fnx.channels_last, (60, 1, 15, 3)),          # N, C, H, W -> NHWC
    ((2, 3, 4, 5, 6), fnx.channels_last_3d, (360, 1, 90, 18, 3))])  # NDHWC
def test_to_lays_out_and_keeps_values(shape, fmt, strides):
    x = fnx.randn(*shape)
    y = x.to(memory_format=fmt)
    assert y.stride() == strides and y.is_contiguous(memory_format=fmt)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.to(memory_format=fmt) is y and y.contiguous(memory_format=fmt) is y
    back = y.contiguous()
    assert back.is_contiguous() and back.stride() == x.stride()
    z = x.to(fnx.float64, memory_format=fmt)
    assert z.dtype is fnx.float64 and z.stride() == strides


def test_is_contiguous_answers_for_the_format_asked():
    x = fnx.zeros(2, 3, 4, 5)
    assert x.is_contiguous() and not x.is_contiguous(memory_format=fnx.channels_last)
    assert not x.is_contiguous(memory_format=fnx.channels_last_3d)      # another rank
    assert x.is_contiguous(memory_format=fnx.contiguous_format)
    assert x.is_contiguous(memory_format=fnx.preserve_format)
    assert not fnx.zeros(2, 3).is_contiguous(memory_format=fnx.channels_last)
    # one channel: both layouts at once (size-1 dims have any stride), as PyTorch answers
    assert fnx.zeros(2, 1, 4, 5).is_contiguous(memory_format=fnx.channels_last)
    assert x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).is_contiguous(
        memory_format="channels_last")


def test_module_to_channels_last_and_gradients():
    conv = fnx.nn.Conv2d(3, 4, 3).to(memory_format=fnx.channels_last)
    assert conv.weight.stride() == (27, 1, 9, 3) and conv.bias.stride() == (1,)
    x = fnx.randn(2, 3, 5, 5, requires_grad=True)
    y = x.to(memory_format=fnx.channels_last)
    (y * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3, 5, 5), 2.0))


def test_bad_formats():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        fnx.zeros(2, 3).to(memory_format=fnx.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        fnx.zeros(2, 3, 4, 5).contiguous(memory_format=fnx.channels_last_3d)
    with pytest.raises(TypeError, match="memory_format must be a fnx.memory_format"):
        fnx.zeros(2).clone(memory_format="rows_first")
