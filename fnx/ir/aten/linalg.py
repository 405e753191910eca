"""Linear algebra: mm, bmm, addmm (core); dot, mv, matmul, outer, linear, baddbmm,
tensordot, einsum.

Matrix products do not promote: both operands must have one dtype, as in PyTorch
(``outer`` is a broadcast multiply and does promote).  ``matmul``, ``linear``, ``outer``,
``baddbmm`` and ``tensordot`` are decompositions (PyTorch's CompositeImplicit ops);
their meta functions give the error the underlying product would raise, named the way
PyTorch names it.

Every product reaches ``prims.dot_general``: mm, bmm, addmm, dot, mv and einsum call it
directly, the others go through them.  Integer products stay integer (they wrap, as
PyTorch's); half types multiply and accumulate in float32 and round once; bool products
are refused, as PyTorch's kernels refuse them.
"""
from __future__ import annotations

import math
import string

from ...core import dtype as D
from ...ops import aten, prims
from .. import refs
from ..grad_utils import conj
from ..registry import TensorMeta, decomposition, defop, derivative
from ..dims import broadcast_shapes, wrap_dim

CORE = ("core",)
ATEN = ()

def same_dtype(a, b, what="m1 and m2"):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected {what} to have the same dtype, but got: {a.dtype.cpp_type} "
                           f"!= {b.dtype.cpp_type}")


def _mm_shape(s1, s2) -> tuple:
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and "
                           f"{s2[0]}x{s2[1]})")
    return (s1[0], s2[1])


def _mv_shape(s, v) -> tuple:
    if s[1] != v[0]:
        raise RuntimeError(f"size mismatch, got input ({s[0]}), mat ({s[0]}x{s[1]}), "
                           f"vec ({v[0]})")
    return (s[0],)



def no_bool(kernel_name, x):
    if x.dtype is D.bool:
        raise RuntimeError(f"\"{kernel_name}\" not implemented for 'Bool'")


def contract(kernel_name, lhs, rhs, lc, rc, lb=(), rb=()):
    """``prims.dot_general`` of two operands of one dtype (bool refused)."""
    no_bool(kernel_name, lhs)
    return prims.dot_general(lhs, rhs, list(lc), list(rc), list(lb), list(rb))


def scaled(x, s):
    """``s * x`` for a Python scalar ``s`` (skipped when ``s`` is 1)."""
    if s == 1:
        return x
    return prims.mul(x, refs.full(tuple(x.shape), s, x.dtype, x.device))


def _mH(x):
    """The conjugate transpose of a matrix (or of each matrix of a batch)."""
    n = x.ndim
    return conj(aten.permute.default(x, list(range(n - 2)) + [n - 1, n - 2]))


# --------------------------------------------------------------------------- core products

def _mm_meta(self, mat2):
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    same_dtype(self, mat2)
    return TensorMeta(_mm_shape(tuple(self.shape), tuple(mat2.shape)), self.dtype)


mm = defop("mm(Tensor self, Tensor mat2) -> Tensor", tags=CORE, meta=_mm_meta)


@decomposition(mm)
def _mm_decomp(self, mat2):
    _mm_meta(self, mat2)
    return contract("addmm_impl_cpu_", self, mat2, [1], [0])


@derivative(mm)
def _mm_backward(grad, self, mat2, needs_input_grad):
    return (mm(grad, _mH(mat2)) if needs_input_grad[0] else None,
            mm(_mH(self), grad) if needs_input_grad[1] else None)


def _bmm_meta(self, mat2):
    if self.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, n, m = self.shape
    b2, m2, p = mat2.shape
    if (b2, m2) != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{b2}, {m2}].")
    same_dtype(self, mat2, "batch1 and batch2")
    return TensorMeta((b, n, p), self.dtype)


bmm = defop("bmm(Tensor self, Tensor mat2) -> Tensor", tags=CORE, meta=_bmm_meta)


@decomposition(bmm)
def _bmm_decomp(self, mat2):
    _bmm_meta(self, mat2)
    return contract("bmm", self, mat2, [2], [1], [0], [0])


@derivative(bmm)
def _bmm_backward(grad, self, mat2, needs_input_grad):
    return (bmm(grad, _mH(mat2)) if needs_input_grad[0] else None,
            bmm(_mH(self), grad) if needs_input_grad[1] else None)


def check_bias(name, self, shape, mat):
    """``self`` of addmm/baddbmm must have the products' dtype and expand to ``shape``."""
    if self.dtype is not mat.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{self.dtype.scalar_type} and {mat.dtype.scalar_type}")
    s = tuple(self.shape)
    ok = len(s) <= len(shape) and all(a in (1, b) for a, b in zip(s[::-1], shape[::-1]))
    if not ok:
        raise RuntimeError(f"{name}: the expanded size of self {list(s)} must match the "
                           f"result size {list(shape)}")


def _addmm_meta(self, mat1, mat2, *, beta=1, alpha=1):
    r = _mm_meta(mat1, mat2)
    check_bias("addmm", self, r.shape, mat2)
    return r


addmm = defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
              "-> Tensor", tags=CORE, meta=_addmm_meta)


def integral_scalar(dtype, s):
    """PyTorch converts beta/alpha to the element type: an integer product truncates a
    float scalar (and a float scalar is fine for floating products)."""
    return int(s) if not (dtype.is_floating_point or dtype.is_complex) else s


@decomposition(addmm)
def _addmm_decomp(self, mat1, mat2, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)`` in the compute dtype, rounded once.
    With beta == 0 ``self`` is not read at all: its nan and inf do not propagate."""
    r = _addmm_meta(self, mat1, mat2, beta=beta, alpha=alpha)
    beta, alpha = integral_scalar(r.dtype, beta), integral_scalar(r.dtype, alpha)
    compute = refs.opmath_dtype(r.dtype)
    out = scaled(contract("addmm_impl_cpu_", refs.to_dtype(mat1, compute),
                          refs.to_dtype(mat2, compute), [1], [0]), alpha)
    if beta != 0:
        bias = refs.broadcast_to(refs.to_dtype(self, compute), r.shape)
        out = prims.add(out, scaled(bias, beta))
    return refs.to_dtype(out, r.dtype)


def _times(g, s):
    return g if s == 1 else aten.mul.Tensor(g, conj(s))


@derivative(addmm)
def _addmm_backward(grad, mat1, mat2, beta, alpha, needs_input_grad):
    # self is broadcast to the result: autograd sums its gradient back to its shape
    return (_times(grad, beta) if needs_input_grad[0] else None,
            _times(mm(grad, _mH(mat2)), alpha) if needs_input_grad[1] else None,
            _times(mm(_mH(mat1), grad), alpha) if needs_input_grad[2] else None)


# --------------------------------------------------------------------------- dot, mv

def _dot_meta(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D "
                           f"tensors")
    n, m = self.shape[0], tensor.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           f"respectively")
    if self.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{self.dtype.scalar_type} and {tensor.dtype.scalar_type}")
    return TensorMeta((), self.dtype)


def _dot_decomp(self, tensor):
    _dot_meta(self, tensor)
    return contract("dot", self, tensor, [0], [0])


dot = defop("dot(Tensor self, Tensor tensor) -> Tensor", tags=ATEN, meta=_dot_meta,
            decomposition=_dot_decomp)


@derivative(dot)
def _dot_backward(grad, self, tensor, needs_input_grad):
    return (aten.mul.Tensor(grad, conj(tensor)) if needs_input_grad[0] else None,
            aten.mul.Tensor(grad, conj(self)) if needs_input_grad[1] else None)


def _mv_meta(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.ndim}, "
                           f"{vec.ndim}")
    shape = _mv_shape(tuple(self.shape), tuple(vec.shape))
    same_dtype(self, vec, "mat and vec")
    return TensorMeta(shape, self.dtype)


def _mv_decomp(self, vec):
    _mv_meta(self, vec)
    return contract("addmv_impl_cpu", self, vec, [1], [0])


mv = defop("mv(Tensor self, Tensor vec) -> Tensor", tags=ATEN, meta=_mv_meta,
           decomposition=_mv_decomp)


@derivative(mv)
def _mv_backward(grad, self, vec, needs_input_grad):
    return (aten.mul.Tensor(aten.unsqueeze.default(grad, 1), conj(vec))
            if needs_input_grad[0] else None,
            mv(_mH(self), grad) if needs_input_grad[1] else None)


# --------------------------------------------------------------------------- matmul

def matmul_shape(s1, s2) -> tuple:
    """The result shape of ``matmul`` for operand shapes ``s1``, ``s2`` (PyTorch's rules
    and errors: 1-D operands gain and lose a dim, batch dims broadcast)."""
    d1, d2 = len(s1), len(s2)
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        if s1[0] != s2[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{s1[0]}] and src "
                               f"[{s2[0]}] to have the same number of elements, but got "
                               f"{s1[0]} and {s2[0]} elements respectively")
        return ()
    if d1 == 2 and d2 == 1:
        return _mv_shape(s1, s2)
    if d1 == 1 and d2 == 2:
        return _mm_shape((1,) + s1, s2)[1:]
    if d1 == 2 and d2 == 2:
        return _mm_shape(s1, s2)
    if d1 >= 3 and d2 <= 2:       # folded into one mm / mv over the rows of every batch
        rows = math.prod(s1[:-1])
        if d2 == 1:
            _mv_shape((rows, s1[-1]), s2)
            return s1[:-1]
        _mm_shape((rows, s1[-1]), s2)
        return s1[:-1] + s2[-1:]
    m1 = (1,) + s1 if d1 == 1 else s1[-2:]
    m2 = s2 + (1,) if d2 == 1 else s2[-2:]
    batch = broadcast_shapes(s1[:-2], s2[:-2])
    if m1[1] != m2[0]:
        b = math.prod(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m1[1]}] but got: [{b}, {m2[0]}].")
    return batch + (m1[0],) * (d1 > 1) + (m2[1],) * (d2 > 1)


def _matmul_meta(self, other):
    shape = matmul_shape(tuple(self.shape), tuple(other.shape))
    if self.ndim == 1 and other.ndim == 1:
        _dot_meta(self, other)
    same_dtype(self, other)
    return TensorMeta(shape, self.dtype)


def _matmul_decomp(self, other):
    """dot / mv / mm for 1-D and 2-D operands; otherwise batch dims are broadcast, folded
    into one and multiplied with bmm (or, for a 1-D/2-D ``other``, one mm)."""
    d1, d2 = self.ndim, other.ndim
    if d1 == 2 and d2 == 2:     # the hot case: mm checks (and words) everything itself
        return mm._call(self, other)
    _matmul_meta(self, other)
    if d1 == 1 and d2 == 1:
        return dot(self, other)
    if d1 == 2 and d2 == 1:
        return mv(self, other)
    if d1 == 1 and d2 == 2:
        return aten.squeeze.dim(mm(aten.unsqueeze.default(self, 0), other), 0)
    s1, s2 = tuple(self.shape), tuple(other.shape)
    if d1 >= 3 and d2 <= 2:
        a = aten.reshape.default(self, [math.prod(s1[:-1]), s1[-1]])   # no -1: size 0 is fine
        if d2 == 1:
            return aten.reshape.default(mv(a, other), list(s1[:-1]))
        return aten.reshape.default(mm(a, other), list(s1[:-1] + s2[-1:]))
    a = aten.unsqueeze.default(self, 0) if d1 == 1 else self
    b = aten.unsqueeze.default(other, -1) if d2 == 1 else other
    batch = broadcast_shapes(s1[:-2], s2[:-2])
    (n, m), (_, p) = tuple(a.shape)[-2:], tuple(b.shape)[-2:]
    nb = math.prod(batch)
    a = aten.reshape.default(aten.expand.default(a, list(batch) + [n, m]), [nb, n, m])
    b = aten.reshape.default(aten.expand.default(b, list(batch) + [m, p]), [nb, m, p])
    out = aten.reshape.default(bmm(a, b), list(batch) + [n, p])
    if d1 == 1:
        out = aten.squeeze.dim(out, -2)
    if d2 == 1:
        out = aten.squeeze.dim(out, -1)
    return out


matmul = defop("matmul(Tensor self, Tensor other) -> Tensor", tags=ATEN, meta=_matmul_meta,
               decomposition=_matmul_decomp)


# --------------------------------------------------------------------------- outer, linear

def _outer_meta(self, vec2):
    for name, x in (("self", self), ("vec2", vec2)):
        if x.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {x.ndim}-D")
    return TensorMeta((self.shape[0], vec2.shape[0]), D.result_type(self, vec2))


def _outer_decomp(self, vec2):
    _outer_meta(self, vec2)
    return aten.mul.Tensor(aten.unsqueeze.default(self, 1), vec2)


outer = defop("outer(Tensor self, Tensor vec2) -> Tensor", tags=ATEN, meta=_outer_meta,
              decomposition=_outer_decomp)


def _weight_t_shape(weight) -> tuple:
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.ndim}D")
    return tuple(weight.shape)[::-1]


def _linear_meta(input, weight, bias=None):
    shape = matmul_shape(tuple(input.shape), _weight_t_shape(weight))
    same_dtype(input, weight)
    if bias is not None:
        check_bias("linear", bias, shape, weight)
    return TensorMeta(shape, input.dtype)


def _linear_decomp(input, weight, bias=None):
    """``input @ weight.T + bias``; a 2-D input with a bias is one addmm."""
    _linear_meta(input, weight, bias)
    wt = aten.t.default(weight)
    if input.ndim == 2 and weight.ndim == 2 and bias is not None:
        return addmm(bias, input, wt)
    out = matmul(input, wt)
    return out if bias is None else aten.add.Tensor(out, bias)


linear = defop("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", tags=ATEN,
               meta=_linear_meta, decomposition=_linear_decomp)


# --------------------------------------------------------------------------- baddbmm

def _baddbmm_meta(self, batch1, batch2, *, beta=1, alpha=1):
    r = _bmm_meta(batch1, batch2)
    check_bias("baddbmm", self, r.shape, batch2)
    return r


def _baddbmm_decomp(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * bmm``; beta == 0 ignores ``self`` (nan and inf included)."""
    r = _baddbmm_meta(self, batch1, batch2, beta=beta, alpha=alpha)
    out = bmm(batch1, batch2)
    if alpha != 1:
        out = aten.mul.Scalar(out, alpha)
    if beta == 0:
        return aten.expand.default(out, list(r.shape)) if tuple(out.shape) != r.shape else out
    return aten.add.Tensor(out, self if beta == 1 else aten.mul.Scalar(self, beta))


baddbmm = defop("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                "Scalar alpha=1) -> Tensor", tags=ATEN, meta=_baddbmm_meta,
                decomposition=_baddbmm_decomp)


# --------------------------------------------------------------------------- tensordot

def _tensordot_meta(self, other, dims_self, dims_other):
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    ds = [wrap_dim(d, self.ndim) for d in dims_self]
    do = [wrap_dim(d, other.ndim) for d in dims_other]
    for a, b in zip(ds, do):
        if self.shape[a] != other.shape[b]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{self.shape[a]} in dim {a} and second has size "
                               f"{other.shape[b]} in dim {b}")
    same_dtype(self, other)
    shape = tuple(s for i, s in enumerate(self.shape) if i not in ds) + \
        tuple(s for i, s in enumerate(other.shape) if i not in do)
    return TensorMeta(shape, self.dtype)


def _tensordot_decomp(self, other, dims_self, dims_other):
    """Permute the contracted dims together, fold both sides to matrices, one mm."""
    r = _tensordot_meta(self, other, dims_self, dims_other)
    ds = [wrap_dim(d, self.ndim) for d in dims_self]
    do = [wrap_dim(d, other.ndim) for d in dims_other]
    fs = [i for i in range(self.ndim) if i not in ds]
    fo = [i for i in range(other.ndim) if i not in do]
    k = math.prod(self.shape[d] for d in ds)
    a = aten.reshape.default(aten.permute.default(self, fs + ds),
                             [math.prod(self.shape[i] for i in fs), k])
    b = aten.reshape.default(aten.permute.default(other, do + fo),
                             [k, math.prod(other.shape[i] for i in fo)])
    return aten.reshape.default(mm(a, b), list(r.shape))


tensordot = defop("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) "
                  "-> Tensor", tags=ATEN, meta=_tensordot_meta, decomposition=_tensordot_decomp)


# --------------------------------------------------------------------------- einsum

_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _einsum_term(term, where):
    """Labels of one subscript term: (labels, index of '...' in them or None)."""
    labels, ell = [], None
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or ell is not None:
                raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any "
                                   f"ellipsis")
            ell = len(labels)
            i += 3
            continue
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                               f"equation string, subscripts must be in [a-zA-Z]")
        labels.append(c)
        i += 1
    return labels, ell


def parse_einsum(equation: str, shapes):
    """An einsum equation made explicit: every '...' replaced by unused letters, the
    implicit output spelled out.  Returns (explicit equation, output shape)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    parsed = [_einsum_term(t, f"operand {i}") for i, t in enumerate(terms)]
    n_ell = 0
    for i, ((labels, ell), shape) in enumerate(zip(parsed, shapes)):
        if ell is None and len(labels) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(labels)}) does not match the number of dimensions "
                               f"({len(shape)}) for operand {i} and no ellipsis was given")
        if ell is not None:
            if len(labels) > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(labels)}) is more than the number of dimensions "
                                   f"({len(shape)}) for operand {i}")
            n_ell = max(n_ell, len(shape) - len(labels))
    used = {c for c in eq if c in _LETTERS}
    free = [c for c in _LETTERS if c not in used]
    if len(free) < n_ell:
        raise RuntimeError("einsum(): too many dimensions under the ellipsis")
    ell_letters = free[:n_ell]
    sizes, counts, full_terms = {}, {}, []
    for i, ((labels, ell), shape) in enumerate(zip(parsed, shapes)):
        if ell is not None:
            k = len(shape) - len(labels)
            labels = labels[:ell] + ell_letters[n_ell - k:] + labels[ell:]
        seen = {}
        for c, s in zip(labels, shape):
            if c not in ell_letters:    # implicit output: labels seen once, repeats summed
                counts[c] = counts.get(c, 0) + 1
            if c in seen:
                if seen[c] != s:
                    raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} "
                                       f"but the sizes don't match, {seen[c]} != {s}")
                continue
            seen[c] = s
            prev = sizes.get(c, 1)
            if s != prev and prev != 1 and s != 1:
                raise RuntimeError(f"einsum(): operands do not broadcast: subscript {c} has "
                                   f"size {s} for operand {i} but size {prev} elsewhere")
            sizes[c] = s if prev == 1 else prev
        full_terms.append("".join(labels))
    if arrow:
        out_labels, out_ell = _einsum_term(rhs, "the output")
        for j, c in enumerate(out_labels):
            if c not in counts:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   f"equation for any input operand")
            if c in out_labels[:j]:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once "
                                   f"in the output")
        if out_ell is not None:    # ellipsis dims missing from the output are summed
            out_labels = out_labels[:out_ell] + ell_letters + out_labels[out_ell:]
    else:
        out_labels = ell_letters + sorted(c for c, n in counts.items() if n == 1)
    out_shape = tuple(sizes[c] for c in out_labels)
    return ",".join(full_terms) + "->" + "".join(out_labels), out_shape


def _einsum_meta(equation, tensors, *, path=None):
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"einsum(): expected all operands to have the same dtype, but "
                               f"got {tensors[0].dtype.scalar_type} and "
                               f"{t.dtype.scalar_type}")
    _, shape = parse_einsum(equation, [tuple(t.shape) for t in tensors])
    return TensorMeta(shape, tensors[0].dtype)


def _diagonal_last(t, i, j):
    """The diagonal of dims ``i`` and ``j`` (equal sizes) as the last dim: both moved to
    the end, flattened to n * n, every (n + 1)-th element taken."""
    n = t.shape[i]
    rest = [d for d in range(t.ndim) if d not in (i, j)]
    t = prims.transpose(t, rest + [i, j])
    lead = [t.shape[d] for d in range(len(rest))]
    t = prims.reshape(t, lead + [n * n])
    return prims.slice(t, [0] * t.ndim, lead + [n * n], [1] * len(lead) + [n + 1])


def _einsum_operand(t, labels, keep):
    """One operand with its repeated labels reduced to diagonals and the labels nothing
    else needs (not in ``keep``) summed away.  Returns (tensor, labels)."""
    labels = list(labels)
    for c in list(dict.fromkeys(labels)):
        while labels.count(c) > 1:                  # 'ii': the diagonal moves to the end
            i = labels.index(c)
            j = labels.index(c, i + 1)
            t = _diagonal_last(t, i, j)
            labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [c]
    summed = [k for k, c in enumerate(labels) if c not in keep]
    if summed:
        t = prims.reduce_sum(t, summed)
        labels = [c for c in labels if c in keep]
    return t, labels


def _expand_label(t, labels, c, size):
    """Broadcast a size-1 label of ``t`` (from an ellipsis) to ``size``."""
    k = labels.index(c)
    if t.shape[k] == size:
        return t
    shape = list(t.shape)
    shape[k] = size
    return prims.broadcast_in_dim(t, shape, list(range(t.ndim)))


def _einsum_decomp(equation, tensors, *, path=None):
    """Left to right, one ``prims.dot_general`` per operand: labels the two sides share
    are batch dims when the output or a later operand still needs them, contracted
    otherwise; labels only one side has stay free.  Labels of a single operand that
    nothing needs are summed first.  A final transpose puts the output labels in order.
    Half types compute in float32 and round once, as the CPU kernel does."""
    r = _einsum_meta(equation, tensors)
    no_bool("einsum", tensors[0])
    explicit, _ = parse_einsum(equation, [tuple(t.shape) for t in tensors])
    terms, out = explicit.split("->")
    terms = terms.split(",")
    compute = refs.opmath_dtype(r.dtype)
    ts = [refs.to_dtype(t, compute) for t in tensors]

    def needed_after(k):
        return set(out).union(*terms[k + 1:])

    acc, acc_labels = _einsum_operand(ts[0], terms[0], needed_after(0))
    for k in range(1, len(ts)):
        later = needed_after(k)
        t, labels = _einsum_operand(ts[k], terms[k], later | set(acc_labels))
        shared = [c for c in acc_labels if c in labels]
        for c in shared:
            size = max(acc.shape[acc_labels.index(c)], t.shape[labels.index(c)])
            acc = _expand_label(acc, acc_labels, c, size)
            t = _expand_label(t, labels, c, size)
        batch = [c for c in shared if c in later]
        summed = [c for c in shared if c not in later]
        acc = prims.dot_general(acc, t, [acc_labels.index(c) for c in summed],
                                [labels.index(c) for c in summed],
                                [acc_labels.index(c) for c in batch],
                                [labels.index(c) for c in batch])
        acc_labels = batch + [c for c in acc_labels if c not in shared] + \
            [c for c in labels if c not in shared]
    # always a transpose (the identity permutation included): the result is a new tensor,
    # never the input itself
    acc = prims.transpose(acc, [acc_labels.index(c) for c in out])
    return refs.to_dtype(acc, r.dtype)


einsum = defop("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
               tags=ATEN, meta=_einsum_meta, decomposition=_einsum_decomp)
