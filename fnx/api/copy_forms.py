"""The ``*_copy`` forms of the view ops (``t_copy``, ``select_copy``, ``split_copy``, ...)
and the splits PyTorch names apart (``split_with_sizes``, ``unsafe_split``, ...).

A ``*_copy`` function is its view op, then a contiguous copy that shares nothing with
``input``: one generic builder, ``_copy_form(name, view)``, and a table of rows. ``out=``
takes PyTorch's rule for these functions: ``out`` must have the result's dtype exactly and
is resized to its shape (``clone.out``); a list of tensors for the splitting ones.

>>> import fnx
>>> x = fnx.tensor([[1, 2], [3, 4]])
>>> y = fnx.t_copy(x); y[0, 0] = 9
>>> y.tolist(), x.tolist()
([[9, 3], [2, 4]], [[1, 2], [3, 4]])
"""
from __future__ import annotations

import inspect

from ..core import dtype as D
from ..core.tensor import tensor_method
from ..ops import aten
from . import shape as _shape
from .creation import arange as _arange

__all__ = ["alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
           "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
           "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
           "unsqueeze_copy", "view_as_complex_copy", "view_as_real_copy", "view_copy",
           "split_with_sizes", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes",
           "as_strided_scatter", "slice_inverse"]

_DENSE = "contiguous_format"       # PyTorch's *_copy results are contiguous


def _copy_form(name, view, example):
    """``fnx.<name>(input, ..., *, out=None)``: ``view(input, ...)`` copied; ``example`` is
    (the arguments after ``input``, the result's shape[, ``input`` if not a 2x3 arange])."""
    def form(input, *args, out=None, **kwargs):
        r = view(input, *args, **kwargs)
        if isinstance(r, (tuple, list)):            # split_copy, unbind_copy
            if out is None:
                return [aten.clone.default(t, memory_format=_DENSE) for t in r]
            if len(out) != len(r):
                raise RuntimeError(f"{name}: expected out to have {len(r)} tensors, "
                                   f"but got {len(out)}")
            for t, o in zip(r, out):
                aten.clone.out(t, memory_format=_DENSE, out=o)
            return None
        if out is None:
            return aten.clone.default(r, memory_format=_DENSE)
        return aten.clone.out(r, memory_format=_DENSE, out=out)
    params = list(inspect.signature(view).parameters.values())
    params[0] = params[0].replace(name="input")
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    form.__signature__ = inspect.Signature(params)
    form.__name__ = form.__qualname__ = name
    view_name = name.removesuffix("_copy")
    args, result, *given = example
    x = given[0] if given else "fnx.arange(6.0).reshape(2, 3)"
    call = f"fnx.{name}(x{', ' if args else ''}{args})"
    shown = f"[t.shape for t in {call}]" if result.startswith("[") else f"{call}.shape"
    form.__doc__ = (f"``{view_name}`` as a new tensor that shares no data with ``input``, "
                    f"as ``torch.{name}``.\n\n    >>> import fnx\n    >>> x = {x}\n"
                    f"    >>> {shown}\n    {result}\n")
    return form


def _alias(input):
    return aten.alias.default(input)


def _expand(input, size, *, implicit=False):
    return input.expand(size)


def _slice(input, dim=0, start=None, end=None, step=1):
    return aten.slice.Tensor(input, dim, start, end, step)


def _split_with_sizes(input, split_sizes, dim=0):
    return aten.split_with_sizes.default(input, list(split_sizes), dim)


def _unfold(input, dimension, size, step):
    return input.unfold(dimension, size, step)


def _view(input, size):
    """``size`` is a shape or a dtype (``view(dtype)`` reinterprets the bits)."""
    return input.view(size)


def _as_strided(input, size, stride, storage_offset=None):
    return _shape.as_strided(input, size, stride, storage_offset)


def _diagonal(input, offset=0, dim1=0, dim2=1):
    return _shape.diagonal(input, offset, dim1, dim2)


def _squeeze(input, dim=None):
    return _shape.squeeze(input, dim)


def _split(input, split_size, dim=0):
    return _shape.split(input, split_size, dim)


def _unbind(input, dim=0):
    return _shape.unbind(input, dim)


def _one(fn):
    """A view function of ``input`` alone, with that signature."""
    def view(input):
        return fn(input)
    return view


alias_copy = _copy_form("alias_copy", _alias, ("", "fnx.Size([2, 3])"))
as_strided_copy = _copy_form("as_strided_copy", _as_strided,
                             ("(2, 2), (1, 2)", "fnx.Size([2, 2])"))
detach_copy = _copy_form("detach_copy", _one(_shape.detach), ("", "fnx.Size([2, 3])"))
diagonal_copy = _copy_form("diagonal_copy", _diagonal, ("", "fnx.Size([2])"))
expand_copy = _copy_form("expand_copy", _expand, ("(4, 2, 3)", "fnx.Size([4, 2, 3])"))
permute_copy = _copy_form("permute_copy", lambda input, dims: _shape.permute(input, dims),
                          ("(1, 0)", "fnx.Size([3, 2])"))
select_copy = _copy_form("select_copy",
                         lambda input, dim, index: _shape.select(input, dim, index),
                         ("1, 0", "fnx.Size([2])"))
slice_copy = _copy_form("slice_copy", _slice, ("1, 0, 2", "fnx.Size([2, 2])"))
split_copy = _copy_form("split_copy", _split, ("2, 1", "[fnx.Size([2, 2]), fnx.Size([2, 1])]"))
split_with_sizes_copy = _copy_form("split_with_sizes_copy", _split_with_sizes,
                                   ("[1, 2], 1", "[fnx.Size([2, 1]), fnx.Size([2, 2])]"))
squeeze_copy = _copy_form("squeeze_copy", _squeeze, ("", "fnx.Size([2, 3])"))
t_copy = _copy_form("t_copy", _one(_shape.t), ("", "fnx.Size([3, 2])"))
transpose_copy = _copy_form("transpose_copy",
                            lambda input, dim0, dim1: _shape.transpose(input, dim0, dim1),
                            ("0, 1", "fnx.Size([3, 2])"))
unbind_copy = _copy_form("unbind_copy", _unbind, ("", "[fnx.Size([3]), fnx.Size([3])]"))
unfold_copy = _copy_form("unfold_copy", _unfold, ("1, 2, 1", "fnx.Size([2, 2, 2])"))
unsqueeze_copy = _copy_form("unsqueeze_copy", lambda input, dim: _shape.unsqueeze(input, dim),
                            ("0", "fnx.Size([1, 2, 3])"))
view_as_complex_copy = _copy_form("view_as_complex_copy",
                                  _one(aten.view_as_complex.default),
                                  ("", "fnx.Size([3])", "fnx.arange(6.0).reshape(3, 2)"))
view_as_real_copy = _copy_form("view_as_real_copy", _one(aten.view_as_real.default),
                               ("", "fnx.Size([2, 2])", "fnx.tensor([1j, 2.0])"))
view_copy = _copy_form("view_copy", _view, ("(3, 2)", "fnx.Size([3, 2])"))


@tensor_method()
def split_with_sizes(input, split_sizes, dim=0):
    """Views of ``input`` along ``dim`` with the given sizes (they must add up to its size),
    as ``torch.split_with_sizes``.

    >>> import fnx
    >>> [t.tolist() for t in fnx.split_with_sizes(fnx.arange(5), [2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    return tuple(_split_with_sizes(input, split_sizes, dim))


@tensor_method()
def unsafe_split(input, split_size, dim=0):
    """``split``, as ``torch.unsafe_split`` (PyTorch's form whose pieces autograd does not
    track as views of ``input``; here they are ordinary views).

    >>> import fnx
    >>> [t.tolist() for t in fnx.unsafe_split(fnx.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    return _shape.split(input, split_size, dim)


@tensor_method()
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes``, as ``torch.unsafe_split_with_sizes``.

    >>> import fnx
    >>> [t.tolist() for t in fnx.unsafe_split_with_sizes(fnx.arange(3), [1, 2])]
    [[0], [1, 2]]
    """
    return tuple(_split_with_sizes(input, split_sizes, dim))


@tensor_method()
def unsafe_chunk(input, chunks, dim=0):
    """``chunk``, as ``torch.unsafe_chunk``.

    >>> import fnx
    >>> [t.tolist() for t in fnx.unsafe_chunk(fnx.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    return _shape.chunk(input, chunks, dim)


def _positions(size, stride, offset, device):
    """The storage position of each element of a strided view, in the view's shape."""
    pos = _arange(offset, offset + 1, dtype=D.int64, device=device).reshape([1] * len(size))
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (_arange(n, dtype=D.int64, device=device) * s).reshape(shape)
    return pos.reshape(-1)


@tensor_method()
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` whose elements at ``input.as_strided(size, stride,
    storage_offset)`` are ``src``'s, as ``torch.as_strided_scatter``: positions are in
    ``input``'s storage (its strides and offset), so for a non-contiguous ``input`` only
    the positions it covers show up in the result.

    >>> import fnx
    >>> fnx.as_strided_scatter(fnx.zeros(2, 2), fnx.ones(2), (2,), (3,)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    base = input.storage_offset()
    offset = base if storage_offset is None else int(storage_offset)
    if list(src.shape) != size:
        raise RuntimeError(f"as_strided_scatter: expected src to have a size equal to the "
                           f"slice of self. src size = {list(src.shape)}, slice size = {size}")
    if len(stride) != len(size):
        raise RuntimeError(f"as_strided_scatter: mismatch in length of strides and shape "
                           f"({len(stride)} vs {len(size)})")
    shape, strides = list(input.shape), list(input.stride())
    extent = base + sum((n - 1) * s for n, s in zip(shape, strides)) + 1 if all(shape) else 0
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else -1
    if offset < 0 or any(s < 0 for s in stride) or last >= max(extent, input.numel()):
        raise RuntimeError(f"as_strided_scatter: sizes {size}, strides {stride} and storage "
                           f"offset {offset} are out of bounds for the storage of a tensor "
                           f"of {input.numel()} elements")
    # a buffer standing for the storage: input's elements, then src's written over them
    n = max(extent, last + 1, 1)
    here = _positions(shape, strides, base, input.device)
    buf = aten.new_zeros.default(input, [n])
    buf = aten.index_put.default(buf, [here], input.reshape(-1))
    buf = aten.index_put.default(buf, [_positions(size, stride, offset, input.device)],
                                 src.reshape(-1).to(input.dtype))
    return buf[here].reshape(shape)


@tensor_method()
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """A view of ``input``'s data with ``src``'s sizes, strides and storage offset, as
    ``torch.slice_inverse`` (the view functionalization writes a slice back through;
    ``dim``/``start``/``end``/``step`` only describe the slice).

    >>> import fnx
    >>> b = fnx.arange(12.0).reshape(3, 4)
    >>> fnx.slice_inverse(b, fnx.ones(3, 2), 1, 1, 3).tolist()
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    """
    return _shape.as_strided(input, list(src.shape), list(src.stride()), src.storage_offset())
