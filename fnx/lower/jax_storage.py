"""Tensor storage at the edge of a compiled JAX program: what a program is given for a
tensor, when an input's buffer may be donated, and how a result becomes a tensor's storage.

- ``program_input(t)``: a resident CPU tensor's ``jax.Array`` (``fnx.core.tensor``), a
  cuda tensor's, else the NumPy array (JAX copies it in). ``feed(t, how)`` also
  *migrates*: a CPU tensor whose NumPy storage nothing else holds becomes resident (one
  transfer) the first time it is fed, so later calls pass it without a copy; not when it
  was written since it was last fed (a buffer refilled in place before every call would
  only be copied back and forth). Whether nothing else holds it is only known before a
  program ever read it: JAX's CPU client keeps a NumPy input alive as long as any output
  of that call lives.
- ``donatable(t, arr)``: whether ``arr``, fed for ``t``, may be donated to a program that
  overwrites ``t`` (XLA then writes the new value in place): it must be ``t``'s own
  storage and referenced by nothing else: no other tensor holding the same array, no
  NumPy view of it alive (a NumPy array fed is always safe: JAX donates its own copy).
- ``rebind(t, arr)``: make the program's result ``arr`` the storage of ``t`` (a write:
  the version is bumped), instead of copying it in; only when ``rebindable(t)`` held
  before the program ran (else the caller copies): not when ``t``'s storage is shared in
  a way a rebind would not reach: ``t`` is a view, has views, or its NumPy array is
  referenced elsewhere (``.numpy()``, ``.data``).
- ``become(t, value)``: a trace tensor the traced code left on a Python object becomes
  a real tensor holding the program's ``value`` (``fnx.compile``'s stored tensors).
"""
from __future__ import annotations

import sys

import jax
import numpy as np

try:    # the concrete class of every jax.Array: a type check costs no ABC lookup
    from jax._src.array import ArrayImpl as ARRAY_TYPE
except ImportError:     # pragma: no cover
    ARRAY_TYPE = jax.Array

from ..core.dispatch_key import DispatchKey
from ..core.tensor import Tensor, exclusive_array, resident, set_resident

__all__ = ["program_input", "feed", "donatable", "rebindable", "rebind", "become", "array_of",
           "ARRAY_TYPE", "KEEP", "BY_PROGRAM", "BY_TRANSFER"]

_ndarray = np.ndarray
_getrefcount = sys.getrefcount
_CPU_BIT = 1 << DispatchKey.CPU
_FUNC_BIT = 1 << DispatchKey.Functionalize


def program_input(t):
    """The array standing for ``t`` in a program (a non-tensor, e.g. a Python number,
    as it is)."""
    if not isinstance(t, Tensor):
        return t
    arr = resident(t)
    return arr if arr is not None else t._data


KEEP, BY_PROGRAM, BY_TRANSFER = 0, 1, 2     # feed's ``how``
_WIDE = {np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128)}
_identity = jax.jit(lambda a: a)


def feed(t, how=KEEP):
    """``program_input(t)``; with ``how`` BY_PROGRAM (arguments: a jitted identity, as
    cheap as JAX's own copy-in once compiled for the shape) or BY_TRANSFER (parameters and
    buffers, fed once: ``device_put``), a CPU tensor is first made resident when nothing
    else holds its NumPy storage (see the module docstring)."""
    if not isinstance(t, Tensor):
        return t
    d = t.__dict__
    arr = d.get("_jax")
    if arr is not None:
        data = d.get("_data")
        if data is None or data is d.get("_jview"):
            return arr
        arr = resident(t)       # _data was assigned behind _jax's back: drops it
    data = t._data
    if how and type(data) is _ndarray and t._ks & _CPU_BIT:
        vc = t._vc
        mark = (id(data), vc[0] if vc is not None else 0)
        fed = d.get("_fed")
        if (fed is None or fed == mark) and t._base is None and exclusive_array(data, 2):
            if data.dtype in _WIDE:
                with jax.enable_x64(True):      # int64/float64 stay 64-bit
                    arr = _identity(data) if how == BY_PROGRAM else jax.device_put(data)
            else:
                arr = _identity(data) if how == BY_PROGRAM else jax.device_put(data)
            set_resident(t, arr)
            if fed is not None:
                del d["_fed"]
            return arr
        d["_fed"] = mark
        # JAX's CPU client reads a NumPy argument in place (zero-copy), when the program
        # runs, after the call returned: a tensor written in place before then (a buffer
        # refilled, a Tensor learning rate's fill_) must not lend it its storage
        return np.array(data)
    return data


def donatable(t, arr) -> bool:
    """Whether ``arr`` (fed for ``t``, passed here straight from the list of program
    inputs) may be donated: see the module docstring."""
    d = t.__dict__
    if arr is d.get("_jax"):
        view = d.get("_data")
        if view is not None:
            # the read-only view kernels read through; drop it unless someone else holds it
            # (d["_data"], d["_jview"], ``view``, the call's argument)
            if view is not d.get("_jview") or _getrefcount(view) != 4:
                return False
            del d["_data"], d["_jview"]
            del view
        # d["_jax"], the inputs list, ``arr``, the call's argument
        return _getrefcount(arr) == 4
    if type(arr) is _ndarray:
        return True
    if arr is d.get("_data") and t._ks & _FUNC_BIT:
        return _rebindable_functional(t, d) and _getrefcount(arr) == 4
    return False


def _rebindable_functional(t, d) -> bool:
    # A tensor of a functional backend (cuda) shares arrays by bookkeeping: a view or an
    # alias (``.data``) is rebuilt from its root on every write, which a rebind skips.
    return t._base is None and "_froot" not in d and not d.get("_fviews")


def rebindable(t) -> bool:
    """Whether ``t``'s storage may be replaced by a program's result (``rebind``): nothing
    shares it in a way a rebind would not reach (``t`` is not a view, has no views, no
    ``.numpy()`` result or ``.data`` handle holds its NumPy array). Ask before the program
    runs: a running program holds its NumPy inputs itself."""
    d = t.__dict__
    if t._ks & _CPU_BIT:
        if t._base is not None:
            return False
        if resident(t) is not None:
            return True
        data = d.get("_data")
        return type(data) is _ndarray and exclusive_array(data, 2)
    if t._ks & _FUNC_BIT:
        return _rebindable_functional(t, d)
    return False


def rebind(t, arr) -> None:
    """Make the ``jax.Array`` ``arr`` (a program's result, of ``t``'s shape and dtype) the
    storage of ``t``, which was ``rebindable`` when the program started; a rebind is a
    write: ``t``'s version is bumped."""
    if t._ks & _CPU_BIT:
        set_resident(t, arr)
    else:
        t.__dict__["_data"] = arr
    t._bump_version()


def become(t, value) -> None:
    """Trace tensor ``t`` becomes a real tensor holding ``value`` (same object, so every
    place that kept it sees the value), with ``value``'s autograd history: the compiled
    program's node where ``value`` is its differentiable output, else none (the trace's
    history is gone)."""
    arr = resident(value)
    if arr is not None:
        set_resident(t, arr)        # a resident result stays resident
    else:
        t._data = value._data
    t._dtype, t._device = value._dtype, value._device
    t._ks = value._ks
    t._strides = value._strides
    t._base, t._view_chain, t.grad_fn = None, (), value.grad_fn
    t._output_nr = value._output_nr


def array_of(t):
    """The ``jax.Array`` holding ``t``'s values (a resident CPU tensor's, a cuda tensor's),
    or None for a tensor whose storage is NumPy (or anything else)."""
    arr = resident(t)
    if arr is None:
        arr = t._data
    return arr if isinstance(arr, ARRAY_TYPE) else None
