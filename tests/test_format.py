"""repr(tensor) against hand-written PyTorch-style strings, and set_printoptions."""
import numpy as np
import pytest

import fnx
from fnx.api.printing import printoptions
from fnx.backends.cpu import CPU_KS
from fnx.core.tensor import Tensor


@pytest.fixture(autouse=True)
def _default_printoptions():
    fnx.set_printoptions(profile="default")
    yield
    fnx.set_printoptions(profile="default")


T = fnx.tensor


@pytest.mark.parametrize("t,expected", [
    (lambda: T([1., 2., 3.]), "tensor([1., 2., 3.])"),
    (lambda: T([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: T([-1, 2]), "tensor([-1,  2])"),
    (lambda: T([True, False]), "tensor([ True, False])"),
    (lambda: T(True), "tensor(True)"),
    (lambda: T(3.5), "tensor(3.5000)"),
    (lambda: T(3.), "tensor(3.)"),
    (lambda: T(-0.), "tensor(-0.)"),
    (lambda: T(7), "tensor(7)"),
    (lambda: T([0.1, 0.25]), "tensor([0.1000, 0.2500])"),
    (lambda: T([-0.5, 12.125]), "tensor([-0.5000, 12.1250])"),
    (lambda: T([1e-5, 1e3]), "tensor([1.0000e-05, 1.0000e+03])"),
    (lambda: T([1., 1e4]), "tensor([1.0000e+00, 1.0000e+04])"),
    (lambda: T([123456789.]), "tensor([1.2346e+08])"),
    (lambda: T([0., 1e-5]), "tensor([0.0000e+00, 1.0000e-05])"),
    (lambda: T([float("nan"), 1.]), "tensor([nan, 1.])"),
    (lambda: T([float("inf"), -1.5]), "tensor([    inf, -1.5000])"),
    (lambda: T([float("nan"), float("-inf")]), "tensor([nan, -inf])"),
    (lambda: T([0., 0.]), "tensor([0., 0.])"),
    (lambda: T([1 + 2j, 3 - 1j]), "tensor([1.+2.j, 3.-1.j])"),
    (lambda: T([0.5 + 0j]), "tensor([0.5000+0.j])"),
])
def test_values(t, expected):
    assert repr(t()) == expected


@pytest.mark.parametrize("t,expected", [
    (lambda: T([1, 2], dtype=fnx.int32), "tensor([1, 2], dtype=fnx.int32)"),
    (lambda: T([1., 2.], dtype=fnx.float64), "tensor([1., 2.], dtype=fnx.float64)"),
    (lambda: T([1.5], dtype=fnx.float16), "tensor([1.5000], dtype=fnx.float16)"),
    (lambda: T([1.5], dtype=fnx.bfloat16), "tensor([1.5000], dtype=fnx.bfloat16)"),
    (lambda: T([1], dtype=fnx.uint8), "tensor([1], dtype=fnx.uint8)"),
    (lambda: T([1j], dtype=fnx.complex128), "tensor([0.+1.j], dtype=fnx.complex128)"),
    (lambda: T([1, 2]), "tensor([1, 2])"),
])
def test_dtype_suffix(t, expected):
    assert repr(t()) == expected


def test_dtype_suffix_follows_default_dtype():
    fnx.set_default_dtype(fnx.float64)
    assert repr(T([1., 2.], dtype=fnx.float64)) == "tensor([1., 2.])"
    assert repr(T([1., 2.], dtype=fnx.float32)) == "tensor([1., 2.], dtype=fnx.float32)"
    assert repr(T([1j], dtype=fnx.complex128)) == "tensor([0.+1.j])"
    assert repr(T([1j], dtype=fnx.complex64)) == "tensor([0.+1.j], dtype=fnx.complex64)"


def test_nested():
    assert repr(T([[1., 2.], [3., 4.]])) == ("tensor([[1., 2.],\n"
                                             "        [3., 4.]])")
    assert repr(T([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])) == ("tensor([[[1, 2],\n"
                                                             "         [3, 4]],\n"
                                                             "\n"
                                                             "        [[5, 6],\n"
                                                             "         [7, 8]]])")
    assert repr(T([[1.5, 10.], [-3., 4.]])) == ("tensor([[ 1.5000, 10.0000],\n"
                                                "        [-3.0000,  4.0000]])")


def test_line_wrapping():
    assert repr(fnx.arange(30.)) == (
        "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
        "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
        "        28., 29.])")


def test_suffix_wraps_to_a_new_line():
    t = fnx.arange(0, 45, 1.5, dtype=fnx.float64)
    assert repr(t) == (
        "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
        "        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n"
        "        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n"
        "        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000],\n"
        "       dtype=fnx.float64)")


def test_summarization():
    assert repr(fnx.arange(1001)) == "tensor([   0,    1,    2,  ...,  998,  999, 1000])"
    assert repr(fnx.arange(1000)).count("...") == 0
    assert repr(fnx.arange(2000.)) == (
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])")
    assert repr(fnx.zeros(100, 100)) == ("tensor([[0., 0., 0.,  ..., 0., 0., 0.],\n"
                                         "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
                                         "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
                                         "        ...,\n"
                                         "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
                                         "        [0., 0., 0.,  ..., 0., 0., 0.],\n"
                                         "        [0., 0., 0.,  ..., 0., 0., 0.]])")


def test_summarization_uses_only_shown_values():
    # The huge middle value is hidden, so it does not switch to scientific notation.
    a = np.ones(2001, np.float32)
    a[1000] = 1e9
    assert repr(fnx.from_numpy(a)) == "tensor([1., 1., 1.,  ..., 1., 1., 1.])"


def test_empty_and_meta():
    assert repr(T([])) == "tensor([])"
    assert repr(fnx.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(T([], dtype=fnx.int64)) == "tensor([], dtype=fnx.int64)"
    assert repr(fnx.zeros(2, 3, device="meta")) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(fnx.zeros(2, dtype=fnx.int64, device="meta")) == (
        "tensor(..., device='meta', size=(2,), dtype=fnx.int64)")
    assert repr(fnx.zeros((), device="meta")) == "tensor(..., device='meta', size=())"


def test_autograd_suffixes():
    assert repr(fnx.tensor([1., 2.], requires_grad=True)) == (
        "tensor([1., 2.], requires_grad=True)")

    class AddBackward0:
        pass
    t = T([2.])
    t.grad_fn = AddBackward0()
    assert repr(t) == "tensor([2.], grad_fn=<AddBackward0>)"

    class Node:
        def name(self):
            return "torch::autograd::MulBackward0"
    t.grad_fn = Node()
    assert repr(t) == "tensor([2.], grad_fn=<MulBackward0>)"


def test_device_suffix():
    t = Tensor._make(np.array([1., 2.], np.float32), fnx.float32, fnx.device("cuda", 0),
                     CPU_KS)
    assert repr(t) == "tensor([1., 2.], device='cuda:0')"
    t = Tensor._make(np.array([1, 2]), fnx.int32, fnx.device("cuda", 1), CPU_KS)
    assert repr(t) == "tensor([1, 2], device='cuda:1', dtype=fnx.int32)"


def test_set_printoptions():
    x = T([1.23456, 2.5])
    fnx.set_printoptions(precision=2)
    assert repr(x) == "tensor([1.23, 2.50])"
    fnx.set_printoptions(sci_mode=True)
    assert repr(x) == "tensor([1.23e+00, 2.50e+00])"
    fnx.set_printoptions(precision=4, sci_mode=False)
    # PyTorch keeps the column width measured in scientific notation
    assert repr(T([1e-5, 1e3])) == "tensor([    0.0000,  1000.0000])"
    fnx.set_printoptions(threshold=5, edgeitems=2)
    assert repr(fnx.arange(10)) == "tensor([0, 1,  ..., 8, 9])"
    fnx.set_printoptions(profile="default", linewidth=20)
    assert repr(fnx.arange(8)) == "tensor([0, 1, 2, 3,\n        4, 5, 6, 7])"
    fnx.set_printoptions(profile="full")
    assert "..." not in repr(fnx.arange(2000))
    fnx.set_printoptions(profile="short")
    assert repr(T([1.23456])) == "tensor([1.23])"
    with pytest.raises(ValueError, match="unknown profile"):
        fnx.set_printoptions(profile="tiny")


def test_printoptions_context_manager():
    with printoptions(precision=1):
        assert repr(T([0.25, 1.5])) == "tensor([0.2, 1.5])"
    assert repr(T([0.25, 1.5])) == "tensor([0.2500, 1.5000])"


def test_str_and_format():
    x = T([1., 2.])
    assert str(x) == repr(x)
    assert f"{T(2.5):.1f}" == "2.5"
