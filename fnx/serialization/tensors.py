"""Tensors from loaded arrays, for every checkpoint format: the stored dtype of each fnx
dtype, ``map_location``, parameters; and what ``pickle``/``copy.deepcopy`` of a tensor
call (``Tensor.__reduce_ex__``, ``Tensor.__deepcopy__``)."""
from __future__ import annotations

import copy

import numpy as np

from ..backends.cpu._core import wrap
from ..core import dtype as D
from ..core.device import device as _device_cls
from ..core.grad_mode import no_grad
from ..core.layout import by_name, sparse_coo, strided
from ..core.tensor import _autograd_bit, tensor_method
from ..ops import aten
from .errors import CheckpointError

__all__ = ["STORAGE", "make", "Placing", "register_parameter_class", "parameter",
           "rebuild_tensor"]

# On-disk storage dtype of each fnx dtype (bfloat16 as its bits).
STORAGE = {d.name: (np.dtype(np.uint16) if d is D.bfloat16 else np.dtype(d.numpy))
           for d in D._ALL}

_parameter_class = None     # fnx.nn.Parameter, registered by fnx.nn (a layer above)


def register_parameter_class(cls) -> None:
    """Entries saved as parameters load as ``cls`` instances (``fnx.nn`` registers
    ``nn.Parameter``)."""
    global _parameter_class
    _parameter_class = cls


def parameter(t, requires_grad=True):
    return _parameter_class(t, requires_grad=requires_grad)


class Placing(Exception):
    """Carries an error raised while placing a loaded tensor (the user's ``map_location``,
    a device move): not a problem of the file, so ``fnx.load`` re-raises it as it is."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def make(arr, dtype_name, device_str, requires_grad, map_location, parameter=False):
    """A tensor from its stored array (copied), moved where ``map_location`` says."""
    dtype = D._NAMES[dtype_name]
    if dtype is D.bfloat16:
        arr = arr.view(D.bfloat16.numpy)
    t = wrap(np.array(arr, copy=True), dtype)
    try:
        t = _place(t, map_location, device_str)
    except CheckpointError:
        raise
    except Exception as e:      # noqa: BLE001 - the user's callable or a device move
        raise Placing(e) from None
    if parameter:
        return _parameter_class(t, requires_grad=bool(requires_grad))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _place(t, map_location, device_str):
    target = _target(map_location, device_str)
    if callable(target):
        return target(t, device_str)
    if target.type == "cpu":
        return t
    try:
        return t.to(target)
    except RuntimeError as e:
        if target.type == "cuda":
            raise RuntimeError(f"Attempting to deserialize object on a CUDA device but "
                               f"fnx.cuda.is_available() is False. If you are running on a "
                               f"CPU-only machine, please use fnx.load with "
                               f"map_location='cpu' to map your tensors to the CPU. "
                               f"({e})") from None
        raise


def _target(map_location, device_str):
    if map_location is None or isinstance(map_location, dict):
        name = device_str if map_location is None else map_location.get(device_str, device_str)
        try:
            return _device_cls(name)
        except (TypeError, ValueError, RuntimeError) as e:
            if name != device_str:
                raise
            # the file's own device string: a problem of the file (or of this fnx)
            raise CheckpointError(f"fnx.load: the checkpoint puts a tensor on the device "
                                  f"{device_str!r}, which fnx does not know ({e}); pass "
                                  f"map_location='cpu' to load it on the CPU") from None
    if isinstance(map_location, (str, _device_cls)):
        return _device_cls(map_location)
    if callable(map_location):
        return map_location
    raise TypeError(f"fnx.load: map_location must be a device, a string, a dict or a "
                    f"callable, not {type(map_location).__name__}")


# ----------------------------------------------------------------------------- pickle, copy

def rebuild_tensor(array, dtype_name, device_str, requires_grad):
    """What unpickling a tensor calls (see ``Tensor.__reduce_ex__``)."""
    t = wrap(np.asarray(array), D._NAMES[dtype_name])
    if device_str != "cpu":
        t = t.to(device_str)
    if requires_grad:
        t.requires_grad_(True)
    return t


_INTERNAL = {"grad", "grad_fn"}


def deepcopy_tensor(t, memo):
    """``copy.deepcopy`` of a leaf tensor: new data, same class (``nn.Parameter`` stays
    one), dtype, device and requires_grad; ``.grad`` and public attributes are copied too."""
    if id(t) in memo:
        return memo[id(t)]
    if t.grad_fn is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment.")
    with no_grad():
        c = t.clone()
    new = object.__new__(type(t))
    new._data, new._dtype, new._device = c._data, c._dtype, c._device
    ks = c._ks
    new._ks = ks | _autograd_bit(ks) if t.requires_grad else ks
    memo[id(t)] = new
    if t.grad is not None:
        new.grad = copy.deepcopy(t.grad, memo)
    for k, v in t.__dict__.items():
        if not k.startswith("_") and k not in _INTERNAL:
            setattr(new, k, copy.deepcopy(v, memo))
    return new


def rebuild_sparse_tensor(layout_name, components, shape, dtype_name, requires_grad):
    """What unpickling a sparse tensor calls: its constructor from the components."""
    lay = by_name(layout_name)
    dtype = D._NAMES[dtype_name]
    if lay is sparse_coo:
        indices, values, coalesced = components
        t = aten._sparse_coo_tensor_with_dims_and_tensors(
            int(indices.shape[0]), len(shape) - int(indices.shape[0]), list(shape), indices,
            values, dtype=dtype, is_coalesced=coalesced)
    else:
        compressed, plain, values = components
        t = aten._sparse_compressed_tensor_unsafe(compressed, plain, values, list(shape),
                                                  dtype=dtype, layout=lay)
    if requires_grad:
        t.requires_grad_(True)
    return t


@tensor_method()
def __reduce_ex__(self, proto):
    lay = self.layout
    if lay is not strided:
        st = self._data
        parts = (st.indices, st.values, st.coalesced) if lay is sparse_coo else \
            (st.compressed, st.plain, st.values)
        return (rebuild_sparse_tensor, (lay.name, parts, tuple(st.shape), self._dtype.name,
                                        self.requires_grad))
    return (rebuild_tensor, (self.cpu().detach().numpy().copy(), self._dtype.name,
                             str(self._device), self.requires_grad))


@tensor_method()
def __deepcopy__(self, memo):
    return deepcopy_tensor(self, memo)
