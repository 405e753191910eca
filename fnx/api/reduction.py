"""Reductions: ``fnx.sum``, ``mean``, ``max``, ``argmax``, ``var``, ``norm``, ... and the
Tensor methods of the same names.

Each function maps PyTorch's Python overloads onto one operator overload (``fnx.max``
alone is ``max.default``, ``max.dim`` or ``maximum``).  Ops that return several tensors
named in PyTorch (``max.dim``) come back as ``return_types`` named tuples.
"""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ir.variants import VARIANTS
from ..ops import aten
from .out_results import write_results

__all__ = ["return_types", "sum", "mean", "prod", "amax", "amin", "aminmax", "max", "min",
           "argmax", "argmin", "any", "all", "var", "std", "var_mean", "std_mean",
           "logsumexp", "cumsum", "cumprod", "count_nonzero", "norm"]


# --------------------------------------------------------------------------- return types

class return_types:
    """Named tuples for ops with named results, as ``torch.return_types``.

    >>> import fnx
    >>> r = fnx.tensor([[1, 5], [7, 2]]).max(dim=1)
    >>> r.values.tolist(), r.indices.tolist()
    ([5, 7], [1, 0])
    >>> values, indices = r
    >>> isinstance(r, tuple), type(r).__name__
    (True, 'max')
    """

    @staticmethod
    def make(name: str, fields) -> type:
        """A tuple subclass ``name`` built from one sequence (``return_types.max((v, i))``,
        like PyTorch's structseq), with a property per field; picklable by name."""
        fields = tuple(fields)

        def __new__(cls, seq):
            seq = tuple(seq)
            if len(seq) != len(fields):
                raise TypeError(f"fnx.return_types.{name} takes a {len(fields)}-sequence "
                                f"({len(seq)}-sequence given)")
            return tuple.__new__(cls, seq)

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"fnx.return_types.{name}(\n{body})"

        ns = {"__slots__": (), "__new__": __new__, "__repr__": __repr__,
              "__reduce__": lambda self: (type(self), (tuple(self),)),
              "__module__": __name__, "_fields": fields}
        for i, f in enumerate(fields):
            ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
        cls = type(name, (tuple,), ns)
        cls.__qualname__ = f"return_types.{name}"
        setattr(return_types, name, cls)
        return cls


for _name, _fields in [("max", "values indices"), ("min", "values indices"),
                       ("sort", "values indices"), ("topk", "values indices"),
                       ("kthvalue", "values indices"), ("mode", "values indices"),
                       ("median", "values indices"), ("nanmedian", "values indices"),
                       ("cummax", "values indices"), ("cummin", "values indices"),
                       ("aminmax", "min max"), ("frexp", "mantissa exponent"),
                       ("histogram", "hist bin_edges"), ("slogdet", "sign logabsdet"),
                       ("qr", "Q R"), ("svd", "U S V"),
                       ("linalg_eigh", "eigenvalues eigenvectors")]:
    return_types.make(_name, _fields.split())


# --------------------------------------------------------------------------- helpers

def dim_list(dim):
    """An ``int[1]?`` argument as a list (or None): one int, a tuple or a list alike (the
    public reduction, statistics and norm functions share it)."""
    if dim is None or isinstance(dim, list):
        return dim
    if isinstance(dim, tuple):
        return list(dim)
    return [dim]


def _is_dim_list(dim) -> bool:
    return isinstance(dim, (list, tuple))


# --------------------------------------------------------------------------- sum, mean, prod

@tensor_method()
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (an int or tuple; every dim when None), as ``torch.sum``.

    Bool and integer tensors sum to int64 unless ``dtype`` is given.

    >>> import fnx
    >>> x = fnx.tensor([[1, 2], [3, 4]])
    >>> fnx.sum(x).item(), x.sum(0).tolist(), x.sum(-1, keepdim=True).tolist()
    (10, [4, 6], [[3], [7]])
    >>> fnx.sum(fnx.tensor([True, True])).dtype
    fnx.int64
    """
    if dim is None and not keepdim:
        return aten.sum.default(input, dtype=dtype)
    return aten.sum.dim_IntList(input, dim_list(dim), keepdim, dtype=dtype)


@tensor_method()
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; the input (or ``dtype``) must be floating or complex.

    >>> import fnx
    >>> fnx.mean(fnx.tensor([[1., 2.], [3., 5.]]), dim=0).tolist()
    [2.0, 3.5]
    """
    if dim is None and not keepdim:
        return aten.mean.default(input, dtype=dtype)
    return aten.mean.dim(input, dim_list(dim), keepdim, dtype=dtype)


@tensor_method()
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or over one ``dim``, as ``torch.prod``.

    >>> import fnx
    >>> fnx.prod(fnx.tensor([[1, 2], [3, 4]]), 1).tolist()
    [2, 12]
    """
    if dim is None:
        if keepdim:
            raise TypeError("prod(): keepdim=True needs a dim")
        return aten.prod.default(input, dtype=dtype)
    if _is_dim_list(dim):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return aten.prod.dim_int(input, dim, keepdim, dtype=dtype)


# --------------------------------------------------------------------------- max-like

@tensor_method()
def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (every dim when empty); NaN propagates.

    >>> import fnx
    >>> fnx.amax(fnx.tensor([[1, 5], [7, 2]]), dim=0).tolist()
    [7, 5]
    """
    return aten.amax.default(input, dim_list(dim) or [], keepdim)


@tensor_method()
def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (every dim when empty); NaN propagates.

    >>> import fnx
    >>> fnx.amin(fnx.tensor([[1, 5], [7, 2]]), dim=(0, 1)).item()
    1
    """
    return aten.amin.default(input, dim_list(dim) or [], keepdim)


@tensor_method()
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` as a named tuple, over ``dim`` or everything.

    >>> import fnx
    >>> fnx.aminmax(fnx.tensor([3, 1, 2])).max.item()
    3
    """
    r = aten.aminmax.default(input, dim=dim, keepdim=keepdim)
    return return_types.aminmax(r if out is None else write_results("aminmax", r, out, (input,)))


def _minmax(name, reduce_all, reduce_dim, binary, doc):
    """``<name>(input, dim=None, keepdim=False, *, other=None)``: the three forms of
    ``torch.max`` (or ``min``) with ``doc``."""
    def fn(input, dim=None, keepdim=False, *, other=None, out=None):
        if isinstance(dim, Tensor):           # max(input, other): elementwise
            dim, other = None, dim
        if other is not None:
            if keepdim:
                raise TypeError(f"{name}(): keepdim is not an argument of {name}(input, other)")
            return binary(input, other) if out is None else \
                VARIANTS[binary]["out"](input, other, out=out)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}(): keepdim=True needs a dim")
            if out is not None:
                raise TypeError(f"{name}(): out= needs a dim or other")
            return reduce_all(input)
        r = reduce_dim(input, dim, keepdim)
        return getattr(return_types, name)(r if out is None else
                                           write_results(name, r, out, (input,)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


max = tensor_method()(_minmax("max", aten.max.default, aten.max.dim, aten.maximum.default, """\
The largest element; with ``dim``, ``(values, indices)`` along it; with a tensor
    ``other``, the elementwise maximum, as ``torch.max``.

    >>> import fnx
    >>> x = fnx.tensor([[1, 5], [7, 2]])
    >>> fnx.max(x).item(), fnx.max(x, 1).indices.tolist(), x.max(fnx.tensor([4, 4])).tolist()
    (7, [1, 0], [[4, 5], [7, 4]])
    """))
min = tensor_method()(_minmax("min", aten.min.default, aten.min.dim, aten.minimum.default, """\
The smallest element; with ``dim``, ``(values, indices)`` along it; with a tensor
    ``other``, the elementwise minimum, as ``torch.min``.

    >>> import fnx
    >>> fnx.min(fnx.tensor([[1, 5], [7, 2]]), dim=0, keepdim=True).values.tolist()
    [[1, 2]]
    """))


@tensor_method()
def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (of the flattened tensor when ``dim`` is None).

    >>> import fnx
    >>> fnx.argmax(fnx.tensor([[1, 5], [7, 2]])).item(), fnx.tensor([3, 9]).argmax(0).item()
    (2, 1)
    """
    return aten.argmax.default(input, dim, keepdim)


@tensor_method()
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (of the flattened tensor when ``dim`` is None).

    >>> import fnx
    >>> fnx.argmin(fnx.tensor([[1, 5], [7, 2]]), dim=1).tolist()
    [0, 1]
    """
    return aten.argmin.default(input, dim, keepdim)


# --------------------------------------------------------------------------- any, all

def _logical(name, full, one, many, doc):
    """``<name>(input, dim=None, keepdim=False)`` over everything, one dim or several, with
    ``doc``."""
    def fn(input, dim=None, keepdim=False):
        if dim is None:
            return full(input) if not keepdim else many(input, None, True)
        if _is_dim_list(dim):
            return many(input, list(dim), keepdim)
        return one(input, dim, keepdim)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


any = tensor_method()(_logical("any", aten.any.default, aten.any.dim, aten.any.dims, """\
True where any element (over ``dim``) is nonzero; bool result (uint8 for uint8 input),
    as ``torch.any``.

    >>> import fnx
    >>> fnx.any(fnx.tensor([[0, 1], [0, 0]]), dim=1).tolist()
    [True, False]
    """))
all = tensor_method()(_logical("all", aten.all.default, aten.all.dim, aten.all.dims, """\
True where every element (over ``dim``) is nonzero, as ``torch.all``.

    >>> import fnx
    >>> fnx.all(fnx.tensor([[1, 1], [0, 1]]), dim=(0, 1)).item()
    False
    """))


# --------------------------------------------------------------------------- var, std

def _correction(name, dim, unbiased, correction):
    """PyTorch's three signatures: (dim, *, correction), (dim, unbiased), (unbiased)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError(f"{name}(): pass either 'unbiased' or 'correction', not both")
        correction = 1 if unbiased else 0
    return dim_list(dim), correction


@tensor_method()
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1), as ``torch.var``.

    >>> import fnx
    >>> x = fnx.tensor([1., 2., 3., 4.])
    >>> fnx.var(x).item(), x.var(correction=0).item(), x.var(0, False).item()
    (1.6666666269302368, 1.25, 1.25)
    """
    dim, correction = _correction("var", dim, unbiased, correction)
    return aten.var.correction(input, dim, correction=correction, keepdim=keepdim)


@tensor_method()
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over ``dim`` (``sqrt(var)``), as ``torch.std``.

    >>> import fnx
    >>> fnx.std(fnx.tensor([[1., 3.], [2., 2.]]), dim=1).tolist()
    [1.4142135381698608, 0.0]
    """
    dim, correction = _correction("std", dim, unbiased, correction)
    return aten.std.correction(input, dim, correction=correction, keepdim=keepdim)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim``, as ``torch.var_mean``.

    >>> import fnx
    >>> v, m = fnx.var_mean(fnx.tensor([1., 2., 3.]))
    >>> v.item(), m.item()
    (1.0, 2.0)
    """
    dim, correction = _correction("var_mean", dim, unbiased, correction)
    return tuple(aten.var_mean.correction(input, dim, correction=correction, keepdim=keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim``, as ``torch.std_mean``.

    >>> import fnx
    >>> s, m = fnx.std_mean(fnx.tensor([1., 3.]), correction=0)
    >>> s.item(), m.item()
    (1.0, 2.0)
    """
    dim, correction = _correction("std_mean", dim, unbiased, correction)
    return tuple(aten.std_mean.correction(input, dim, correction=correction, keepdim=keepdim))


# --------------------------------------------------------------------------- others

@tensor_method()
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably; integers give the default float.

    >>> import fnx
    >>> round(fnx.logsumexp(fnx.tensor([0., 0.]), 0).item(), 4)
    0.6931
    """
    return aten.logsumexp.default(input, dim_list(dim), keepdim)


@tensor_method()
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``; bool and integers accumulate in int64.

    >>> import fnx
    >>> fnx.cumsum(fnx.tensor([[1, 2], [3, 4]]), dim=1).tolist()
    [[1, 3], [3, 7]]
    """
    return aten.cumsum.default(input, dim, dtype=dtype)


@tensor_method()
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``.

    >>> import fnx
    >>> fnx.cumprod(fnx.tensor([1, 2, 3, 4]), 0).tolist()
    [1, 2, 6, 24]
    """
    return aten.cumprod.default(input, dim, dtype=dtype)


@tensor_method()
def count_nonzero(input, dim=None):
    """Number of nonzero elements (over ``dim``), int64.

    >>> import fnx
    >>> fnx.count_nonzero(fnx.tensor([[0, 1], [2, 3]]), dim=0).tolist()
    [1, 2]
    """
    if _is_dim_list(dim):
        return aten.count_nonzero.dim_IntList(input, list(dim))
    return aten.count_nonzero.default(input, dim)


@tensor_method()
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over ``dim`` (every element when None), as ``torch.norm``.

    ``p`` is a number (2, 1, ``inf``, ``-inf``, 0, any real), ``'fro'`` (the 2-norm) or
    ``'nuc'`` (the nuclear norm of the matrices over two dims, the last two by default).

    >>> import fnx
    >>> fnx.norm(fnx.tensor([3., 4.])).item(), fnx.tensor([[3., -4.]]).norm(1, dim=1).tolist()
    (5.0, [7.0])
    """
    if isinstance(p, str):
        if p == "nuc":      # the sum of the singular values of the matrices over dim
            dims = [-2, -1] if dim is None else dim_list(dim)
            return aten.linalg_matrix_norm.str_ord(input, "nuc", dims, keepdim, dtype=dtype)
        if p != "fro":
            raise RuntimeError(f"norm(): unknown p '{p}'; expected a number, 'fro' or 'nuc'")
        if _is_dim_list(dim) and len(dim) > 2:
            raise RuntimeError(f"norm(): the Frobenius norm takes at most 2 dims, got "
                               f"{len(dim)}")
        p = 2
    elif p is None:
        p = 2
    if dtype is not None:
        return aten.linalg_vector_norm.default(input, p, dim_list(dim), keepdim, dtype=dtype)
    if dim is None:
        if keepdim:
            return aten.linalg_vector_norm.default(input, p, None, True)
        return aten.norm.Scalar(input, p)
    return aten.norm.ScalarOpt_dim(input, p, dim_list(dim), keepdim)
