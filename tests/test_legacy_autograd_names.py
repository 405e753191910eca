"""Old PyTorch names kept for old code: ``autograd.Variable``, ``nn.init``'s initializers
without the trailing underscore and ``nn.utils.clip_grad_norm``, checked against their
current forms and PyTorch's documented behaviour (warnings, errors)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fnx
from fnx.autograd import Variable


def test_variable_is_a_leaf_sharing_storage():
    x = fnx.tensor([1.0, 2.0])
    v = Variable(x, requires_grad=True)
    assert v.requires_grad and v.is_leaf and not x.requires_grad and v is not x
    (v * v).sum().backward()
    assert v.grad.tolist() == [2.0, 4.0]
    with fnx.no_grad():
        v[0] = 7.0                              # the storage is shared, as PyTorch's
    assert x.tolist() == [7.0, 2.0]
    y = fnx.ones(2, requires_grad=True) * 3     # a non-leaf: the Variable is a leaf
    w = Variable(y)
    assert w.is_leaf and not w.requires_grad and w.grad_fn is None
    assert isinstance(x, Variable) and isinstance(fnx.nn.Parameter(x), Variable)
    assert not isinstance(np.ones(2), Variable)


def test_variable_errors_and_volatile():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        Variable(3)
    with pytest.warns(UserWarning, match="volatile was removed"):
        v = Variable(fnx.ones(2), volatile=True)
    assert v.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("old, new, args", [
    ("uniform", "uniform_", ()), ("normal", "normal_", ()), ("constant", "constant_", (0.5,)),
    ("xavier_uniform", "xavier_uniform_", ()), ("xavier_normal", "xavier_normal_", ()),
    ("kaiming_uniform", "kaiming_uniform_", ()), ("kaiming_normal", "kaiming_normal_", ()),
    ("orthogonal", "orthogonal_", ()), ("sparse", "sparse_", (0.5,))])
def test_init_old_names_warn_and_draw_the_same_values(old, new, args):
    fnx.manual_seed(3)
    want = getattr(fnx.nn.init, new)(fnx.empty(6, 4), *args)
    fnx.manual_seed(3)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of "
                                           f"`nn.init.{new}`"):
        got = getattr(fnx.nn.init, old)(fnx.empty(6, 4), *args)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_clip_grad_norm_old_name():
    p = fnx.nn.Parameter(fnx.zeros(3))
    p.grad = fnx.tensor([2.0, 0.0, 0.0])
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        total = fnx.nn.utils.clip_grad_norm([p], 0.5)
    assert total.item() == 2.0
    np.testing.assert_allclose(p.grad.numpy(), [0.5 * 2 / (2 + 1e-6), 0, 0], rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fnx.nn.utils.clip_grad_norm_([p], 10.0)     # the current name does not warn
