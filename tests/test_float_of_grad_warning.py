"""``float()`` of a tensor that requires grad warns once per process (as torch does);
``item()``, ``int()`` and ``float()`` under ``no_grad`` do not."""
import warnings

import pytest

import fnx
import fnx.core.tensor as core_tensor


def test_float_of_a_grad_tensor_warns_once(monkeypatch):
    monkeypatch.setattr(core_tensor, "_FLOAT_OF_GRAD_WARNED", False)
    x = (fnx.ones(1, requires_grad=True) * 2.5).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.item() == 2.5 and int(x) == 2
        with fnx.no_grad():
            assert float(x) == 2.5
        assert float(x.detach()) == 2.5
    with pytest.warns(UserWarning, match="requires_grad=True to a scalar"):
        assert float(x) == 2.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(x) == 2.5          # once per process
