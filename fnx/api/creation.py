"""Making tensors: ``fnx.tensor``, ``from_numpy``, ``as_tensor``, the factories (``zeros``,
``arange``, ``eye``...), random sampling (``rand``, ``randn``, ``randint``, ``normal``...)
and the ``Tensor.new_*`` and in-place sampling methods.

Sizes are variadic as in PyTorch: ``fnx.zeros(2, 3)``, ``fnx.zeros((2, 3))`` and
``fnx.zeros([2, 3])`` are the same.  Factories without a tensor argument dispatch through
the BackendSelect key, which reads ``device=``.
"""
from __future__ import annotations

import numpy as np

from ..backends.cpu._core import wrap
from ..core import dtype as D
from ..core.device import CPU
from ..core.tensor import Tensor, tensor_method
from ..ir.backend_select import device_arg
from ..ops import aten

__all__ = ["tensor", "as_tensor", "from_numpy", "scalar_tensor", "empty", "empty_strided",
           "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
           "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
           "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
           "empty_permuted"]


# Python sequences read as nested data; ``range`` too, as PyTorch reads any sequence
# (``torch.tensor(range(3))``, and ``x[range(n), y]`` in mnist_forward_forward)
_SEQUENCES = (list, tuple, range)


def _infer_dtype(data):
    """PyTorch's inference from nested Python data: bool < int64 < default float < complex."""
    kinds = set()

    def walk(x):
        if isinstance(x, Tensor):
            kinds.add(x._dtype)
        elif isinstance(x, np.ndarray) or isinstance(x, np.generic):
            kinds.add(D.from_numpy_dtype(x.dtype))
        elif isinstance(x, _SEQUENCES):
            for y in x:
                walk(y)
        else:
            kinds.add(D._scalar_dtype_slow(x))
    walk(data)
    if not kinds:
        return D.get_default_dtype()
    out = None
    for k in kinds:
        out = k if out is None else D.promote_types(out, k)
    return out


def _to_numpy(data, dtype):
    if isinstance(data, Tensor):
        return data.detach().cpu()._data.astype(dtype.numpy)
    if isinstance(data, _SEQUENCES):
        data = [_to_numpy(x, dtype) if isinstance(x, (Tensor, *_SEQUENCES)) else x
                for x in data]
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(f"tensor(): expected a sequence of equal-length rows: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"tensor(): could not infer dtype of {type(data).__name__} element")
    return arr.astype(dtype.numpy)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays, tensors).

    >>> import fnx
    >>> fnx.tensor([[1, 2], [3, 4]]).dtype, fnx.tensor([1, 2.5]).dtype
    (fnx.int64, fnx.float32)
    """
    if dtype is None:
        dtype = _infer_dtype(data)
    elif not isinstance(dtype, D.dtype):
        raise TypeError(f"tensor(): argument 'dtype' must be fnx.dtype, not "
                        f"{type(dtype).__name__}")
    t = wrap(_to_numpy(data, dtype), dtype)
    if device_arg(device) is not CPU:
        t = aten._to_copy.default(t, device=device_arg(device))
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``ndarray``.

    >>> import fnx, numpy as np
    >>> a = np.zeros(3, np.float32); t = fnx.from_numpy(a); _ = t.add_(1); a
    array([1., 1., 1.], dtype=float32)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return wrap(ndarray, D.from_numpy_dtype(ndarray.dtype))


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Share memory with ``data`` when dtype and device allow, else copy.

    >>> import fnx, numpy as np
    >>> a = np.ones(2); t = fnx.as_tensor(a); _ = t.add_(1); a
    array([2., 2.])
    """
    if isinstance(data, Tensor):
        if (dtype is None or dtype is data._dtype) and (device is None or
                                                        device_arg(device) == data._device):
            return data
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype) and \
            device_arg(device) is CPU:
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-dim tensor holding ``s`` (the default float dtype unless ``dtype`` says otherwise).

    >>> import fnx
    >>> fnx.scalar_tensor(3)
    tensor(3.)
    """
    t = aten.scalar_tensor.default(s, dtype=dtype if dtype is not None else
                                   D.get_default_dtype(), device=device)
    return t.requires_grad_(True) if requires_grad else t


# ---------------------------------------------------------------------------- factories

def _size(name, size, kw):
    """Variadic sizes: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(size=(2, 3))``."""
    kw_size = kw.pop("size", None)
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
    if kw_size is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kw_size,)
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        return list(size[0])
    if not size:
        raise TypeError(f"{name}() missing 1 required positional argument: 'size'")
    return list(size)


def _finish(t, requires_grad):
    return t.requires_grad_(True) if requires_grad else t


def empty(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw) -> Tensor:
    """An uninitialized tensor of the given size.

    >>> import fnx
    >>> fnx.empty(2, 3).shape, fnx.empty((2,), dtype=fnx.int8).dtype
    (fnx.Size([2, 3]), fnx.int8)
    """
    t = aten.empty.memory_format(_size("empty", size, kw), dtype=dtype, device=device,
                                 memory_format=memory_format, layout=layout)
    return _finish(t, requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """An uninitialized tensor with the given strides (in elements).

    >>> import fnx
    >>> fnx.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    return _finish(aten.empty_strided.default(list(size), list(stride), dtype=dtype,
                                              device=device), requires_grad)



def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False) -> Tensor:
    """An uninitialized dense tensor whose dims lie in memory in the order
    ``physical_layout`` (outermost first): ``stride(physical_layout[i])`` is the contiguous
    stride of position ``i``, as ``torch.empty_permuted`` (``(0, 2, 3, 1)`` is NHWC).

    >>> import fnx
    >>> fnx.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1)).stride()
    (60, 1, 15, 3)
    """
    size, layout_ = list(size), list(physical_layout)
    n = len(size)
    if len(layout_) != n:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(layout_)}")
    seen = set()
    for i, d in enumerate(layout_):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {d} at index {i}).  NB: negative dims not currently "
                               f"supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    stride, step = [0] * n, 1
    for d in reversed(layout_):          # innermost first
        stride[d] = step
        step *= max(size[d], 1)
    return empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          **kw) -> Tensor:
    """A tensor of zeros (the default float dtype unless ``dtype`` says otherwise).

    >>> import fnx
    >>> fnx.zeros(2, 3)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    t = aten.zeros.default(_size("zeros", size, kw), dtype=dtype, device=device,
                           layout=layout)
    return _finish(t, requires_grad)


def ones(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
         **kw) -> Tensor:
    """A tensor of ones.

    >>> import fnx
    >>> fnx.ones([2], dtype=fnx.int32)
    tensor([1, 1], dtype=fnx.int32)
    """
    t = aten.ones.default(_size("ones", size, kw), dtype=dtype, device=device)
    return _finish(t, requires_grad)


def full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype follows the value (bool, int64, float).

    >>> import fnx
    >>> fnx.full((2,), 7), fnx.full((2,), 0.5), fnx.full((1,), True)
    (tensor([7, 7]), tensor([0.5000, 0.5000]), tensor([True]))
    """
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size,)
    return _finish(aten.full.default(list(size), fill_value, dtype=dtype, device=device),
                   requires_grad)


def _like(name, op):
    """``<name>(input, *, dtype=None, ...)``: ``op`` with ``input``'s size."""
    def fn(input, *, dtype=None, layout=None, device=None, requires_grad=False,
           memory_format=None, pin_memory=False) -> Tensor:
        return _finish(op(input, dtype=dtype, device=device, memory_format=memory_format),
                       requires_grad)
    fn.__name__ = fn.__qualname__ = name
    return fn


empty_like = _like("empty_like", aten.empty_like.default)
empty_like.__doc__ = """An uninitialized tensor with ``input``'s size, dtype and device.

    >>> import fnx
    >>> fnx.empty_like(fnx.tensor([1, 2])).shape
    fnx.Size([2])
    """
zeros_like = _like("zeros_like", aten.zeros_like.default)
zeros_like.__doc__ = """Zeros with ``input``'s size, dtype and device.

    >>> import fnx
    >>> fnx.zeros_like(fnx.tensor([1, 2]))
    tensor([0, 0])
    """
ones_like = _like("ones_like", aten.ones_like.default)
ones_like.__doc__ = """Ones with ``input``'s size, dtype and device.

    >>> import fnx
    >>> fnx.ones_like(fnx.tensor([1.5]), dtype=fnx.bool)
    tensor([True])
    """


def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None, pin_memory=False) -> Tensor:
    """``fill_value`` with ``input``'s size, dtype and device.

    >>> import fnx
    >>> fnx.full_like(fnx.tensor([1, 2]), 2.7)
    tensor([2, 2])
    """
    return _finish(aten.full_like.default(input, fill_value, dtype=dtype, device=device,
                                          memory_format=memory_format), requires_grad)


def arange(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False) -> Tensor:
    """``[start, end)`` in steps of ``step``; int64 when all three are ints.

    >>> import fnx
    >>> fnx.arange(4), fnx.arange(1, 2, 0.25)
    (tensor([0, 1, 2, 3]), tensor([1.0000, 1.2500, 1.5000, 1.7500]))
    """
    if end is None:
        start, end = 0, start
    return _finish(aten.arange.start_step(start, end, step, dtype=dtype, device=device),
                   requires_grad)


def linspace(start, end, steps, *, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> import fnx
    >>> fnx.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    return _finish(aten.linspace.default(start, end, steps, dtype=dtype, device=device),
                   requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False) -> Tensor:
    """``base ** linspace(start, end, steps)``.

    >>> import fnx
    >>> fnx.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    return _finish(aten.logspace.default(start, end, steps, base, dtype=dtype, device=device),
                   requires_grad)


def eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False) -> Tensor:
    """An ``n`` by ``m`` (default ``n``) identity matrix.

    >>> import fnx
    >>> fnx.eye(2, 3, dtype=fnx.int64)
    tensor([[1, 0, 0],
            [0, 1, 0]])
    """
    t = aten.eye.default(n, dtype=dtype, device=device) if m is None else \
        aten.eye.m(n, m, dtype=dtype, device=device)
    return _finish(t, requires_grad)


# ---------------------------------------------------------------------------- random

def rand(*size, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kw) -> Tensor:
    """Uniform samples on ``[0, 1)``.

    >>> import fnx
    >>> x = fnx.rand(2, 3); x.shape, bool(((x >= 0) & (x < 1)).all())
    (fnx.Size([2, 3]), True)
    """
    size = _size("rand", size, kw)
    t = aten.rand.generator(size, generator=generator, dtype=dtype, device=device) \
        if generator is not None else aten.rand.default(size, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def randn(*size, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kw) -> Tensor:
    """Standard normal samples.

    >>> import fnx
    >>> fnx.randn(4, dtype=fnx.float64).dtype
    fnx.float64
    """
    size = _size("randn", size, kw)
    t = aten.randn.generator(size, generator=generator, dtype=dtype, device=device) \
        if generator is not None else aten.randn.default(size, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def randint(*args, size=None, low=None, high=None, generator=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """Integers uniform on ``[low, high)``: ``randint(high, size)`` or
    ``randint(low, high, size)``; int64 unless ``dtype`` says otherwise.

    >>> import fnx
    >>> x = fnx.randint(3, 7, (100,)); x.dtype, bool(((x >= 3) & (x < 7)).all())
    (fnx.int64, True)
    """
    args = list(args)
    if size is None and args and isinstance(args[-1], (list, tuple)):
        size = args.pop()
    if len(args) == 2:
        if low is not None or high is not None:
            raise TypeError("randint() got multiple values for argument 'low'/'high'")
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        elif low is None:
            low = args[0]
        else:
            raise TypeError("randint() got multiple values for argument 'low'")
    elif args:
        raise TypeError(f"randint() takes 2 or 3 positional arguments ({len(args)} given)")
    if high is None or size is None:
        raise TypeError("randint() missing required arguments: expected (high, size) or "
                        "(low, high, size)")
    low = 0 if low is None else low
    t = aten.randint.low_generator(low, high, list(size), generator=generator, dtype=dtype,
                                   device=device) if generator is not None else \
        aten.randint.low(low, high, list(size), dtype=dtype, device=device)
    return _finish(t, requires_grad)


def randperm(n, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64).

    >>> import fnx
    >>> sorted(fnx.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    t = aten.randperm.generator(n, generator=generator, dtype=dtype, device=device) \
        if generator is not None else aten.randperm.default(n, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def _like_sampler(name, op, factory):
    """``<name>(input, *, generator=None, ...)``: ``op``, or ``factory`` with a generator."""
    def fn(input, *, generator=None, dtype=None, layout=None, device=None,
           requires_grad=False, memory_format=None, pin_memory=False) -> Tensor:
        if generator is None:
            t = op(input, dtype=dtype, device=device, memory_format=memory_format)
        else:   # the *_like ops have no generator argument: sample with the factory
            t = factory(*input.shape, generator=generator,
                        dtype=dtype if dtype is not None else input.dtype,
                        device=device if device is not None else input.device)
        return _finish(t, requires_grad)
    fn.__name__ = fn.__qualname__ = name
    return fn


rand_like = _like_sampler("rand_like", aten.rand_like.default, rand)
rand_like.__doc__ = """Uniform ``[0, 1)`` samples with ``input``'s size, dtype and device.

    >>> import fnx
    >>> fnx.rand_like(fnx.zeros(2, dtype=fnx.float64)).dtype
    fnx.float64
    """
randn_like = _like_sampler("randn_like", aten.randn_like.default, randn)
randn_like.__doc__ = """Standard normal samples with ``input``'s size, dtype and device.

    >>> import fnx
    >>> fnx.randn_like(fnx.zeros(2, 3)).shape
    fnx.Size([2, 3])
    """


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, pin_memory=False) -> Tensor:
    """Integers on ``[low, high)`` with ``input``'s size, dtype and device:
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``.

    >>> import fnx
    >>> fnx.randint_like(fnx.zeros(3), 5).dtype
    fnx.float32
    """
    if high is None:
        low, high = 0, low
    return _finish(aten.randint_like.low_dtype(input, low, high, dtype=dtype, device=device,
                                               memory_format=memory_format), requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False) -> Tensor:
    """Normal samples with the given mean and std (tensors broadcast, or floats and ``size``).

    >>> import fnx
    >>> fnx.normal(fnx.zeros(3), 1.0).shape, fnx.normal(0.0, 1.0, (2, 2)).shape
    (fnx.Size([3]), fnx.Size([2, 2]))
    """
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if size is not None:
        if mt or st:
            raise TypeError("normal(): 'size' is only accepted with float mean and std")
        t = aten.normal.float_float(mean, std, list(size), generator=generator, dtype=dtype,
                                    device=device)
    elif mt and st:
        t = aten.normal.Tensor_Tensor(mean, std, generator=generator)
    elif mt:
        t = aten.normal.Tensor_float(mean, std, generator=generator)
    elif st:
        t = aten.normal.float_Tensor(mean, std, generator=generator)
    else:
        raise TypeError("normal() received an invalid combination of arguments: expected a "
                        "Tensor mean or std, or float mean and std with a size")
    return _finish(t, requires_grad)


@tensor_method("bernoulli")
def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """0/1 samples: probability ``input`` elementwise, or ``p`` for every element.

    >>> import fnx
    >>> fnx.bernoulli(fnx.tensor([0., 1.]))
    tensor([0., 1.])
    """
    if p is None:
        return aten.bernoulli.default(input, generator=generator)
    if isinstance(p, Tensor):
        return aten.bernoulli.Tensor(input, p, generator=generator)
    return aten.bernoulli.p(input, p, generator=generator)


@tensor_method("multinomial")
def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """Category indices sampled from the rows of ``input`` (non-negative weights).

    >>> import fnx
    >>> fnx.multinomial(fnx.tensor([0., 1., 0.]), 2, replacement=True)
    tensor([1, 1])
    """
    return aten.multinomial.default(input, num_samples, replacement, generator=generator)


# ---------------------------------------------------------------------------- Tensor methods

@tensor_method()
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Fill with uniform samples on ``[from, to)``.

    >>> import fnx
    >>> x = fnx.zeros(100).uniform_(2, 3); bool(((x >= 2) & (x < 3)).all())
    True
    """
    if "from" in kw:
        from_ = kw.pop("from")
    if kw:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kw))}'")
    return aten.uniform_.default(self, from_, to, generator=generator)


@tensor_method()
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples of the given ``mean`` and ``std``.

    >>> import fnx
    >>> fnx.zeros(2, dtype=fnx.float64).normal_(0, 1).dtype
    fnx.float64
    """
    return aten.normal_.default(self, mean, std, generator=generator)


@tensor_method()
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples of probability ``p`` (a float or a broadcastable tensor).

    >>> import fnx
    >>> fnx.zeros(3).bernoulli_(1.0)
    tensor([1., 1., 1.])
    """
    if isinstance(p, Tensor):
        return aten.bernoulli_.Tensor(self, p, generator=generator)
    return aten.bernoulli_.float(self, p, generator=generator)


@tensor_method()
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential samples of rate ``lambd``.

    >>> import fnx
    >>> bool((fnx.zeros(50).exponential_(2.0) >= 0).all())
    True
    """
    return aten.exponential_.default(self, lambd, generator=generator)


@tensor_method()
def random_(self, *args, generator=None, **kw):
    """Fill with integers: ``random_()`` the dtype's non-negative range, ``random_(to)``
    ``[0, to)``, ``random_(from, to)`` ``[from, to)`` (``to=None``: up to the dtype's max).

    >>> import fnx
    >>> x = fnx.zeros(50, dtype=fnx.int64).random_(3); bool(((x >= 0) & (x < 3)).all())
    True
    """
    frm, to = kw.pop("from", None), kw.pop("to", None)
    if kw:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kw))}'")
    if len(args) == 2:
        frm, to = args
    elif len(args) == 1:
        if frm is None and to is None:
            to = args[0]
        else:
            frm = args[0]
    elif args:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    if frm is None and to is None:
        return aten.random_.default(self, generator=generator)
    if frm is None:
        return aten.random_.to(self, to, generator=generator)
    return getattr(aten.random_, "from")(self, frm, to, generator=generator)


@tensor_method()
def new_empty(self, *size, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, **kw):
    """An uninitialized tensor with self's dtype and device unless given.

    >>> import fnx
    >>> fnx.tensor([1]).new_empty(2, 3).dtype
    fnx.int64
    """
    return _finish(aten.new_empty.default(self, _size("new_empty", size, kw), dtype=dtype,
                                          device=device), requires_grad)


@tensor_method()
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    """An uninitialized tensor with the given strides, self's dtype and device unless given.

    >>> import fnx
    >>> fnx.zeros(1).new_empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    return _finish(aten.new_empty_strided.default(self, list(size), list(stride), dtype=dtype,
                                                  device=device), requires_grad)


@tensor_method()
def new_zeros(self, *size, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, **kw):
    """Zeros with self's dtype and device unless given.

    >>> import fnx
    >>> fnx.tensor([1, 2]).new_zeros(2, 2)
    tensor([[0, 0],
            [0, 0]])
    """
    return _finish(aten.new_zeros.default(self, _size("new_zeros", size, kw), dtype=dtype,
                                          device=device), requires_grad)


@tensor_method()
def new_ones(self, *size, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, **kw):
    """Ones with self's dtype and device unless given.

    >>> import fnx
    >>> fnx.tensor([1.5]).new_ones(2)
    tensor([1., 1.])
    """
    return _finish(aten.new_ones.default(self, _size("new_ones", size, kw), dtype=dtype,
                                         device=device), requires_grad)


@tensor_method()
def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``fill_value`` with self's dtype and device unless given.

    >>> import fnx
    >>> fnx.zeros(1).new_full((2,), 3)
    tensor([3., 3.])
    """
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size,)
    return _finish(aten.new_full.default(self, list(size), fill_value, dtype=dtype,
                                         device=device), requires_grad)


@tensor_method()
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A copy of ``data`` with self's dtype and device unless given.

    >>> import fnx
    >>> fnx.zeros(1).new_tensor([1, 2])
    tensor([1., 2.])
    """
    return tensor(data, dtype=dtype if dtype is not None else self._dtype,
                  device=device if device is not None else self._device,
                  requires_grad=requires_grad)
