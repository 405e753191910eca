"""The OpInfo database: one entry per operator overload, with samples, a NumPy reference,
per-dtype tolerances and known failures as data.

Family modules (``fnx/testing/opinfo/<family>.py``) build ``OpInfo`` entries and pass them
to ``register``; ``fnx.testing.opinfo.entries()`` lists them with the entries derived from
them (the in-place ``op_`` and ``op.out`` variants of a functional entry).
"""
from __future__ import annotations

import threading
import zlib

import numpy as np

import fnx

from ..core import dtype as D
from ..graph.decompose import level as _level

__all__ = ["SampleInput", "ErrorInput", "Known", "OpInfo", "make_tensor", "register",
           "CHECKS", "DEFAULT_TOLS", "FLOATS", "INTS", "ALL_DTYPES", "op_name", "op_db"]

#: Every check an entry can be run through (and a ``Known`` failure can name).
CHECKS = ("reference", "meta", "decomp_core", "decomp_prims", "errors", "lowering", "grad")

FLOATS = (D.float32, D.float64, D.float16, D.bfloat16)
INTS = (D.int64, D.int32, D.int8, D.uint8)
ALL_DTYPES = FLOATS + INTS + (D.bool,)

#: (rtol, atol) per dtype, PyTorch's ``assert_close`` defaults; entries override per dtype.
DEFAULT_TOLS = {
    D.float16: (1e-3, 1e-5), D.bfloat16: (1.6e-2, 1e-5), D.float32: (1.3e-6, 1e-5),
    D.float64: (1e-7, 1e-7), D.complex64: (1.3e-6, 1e-5), D.complex128: (1e-7, 1e-7),
}


# --------------------------------------------------------------------------- samples

def _is_tensor(x) -> bool:
    return hasattr(x, "_ks") and hasattr(x, "_dtype")


def _map(fn, x):
    if _is_tensor(x):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map(fn, y) for y in x)
    return x


class SampleInput:
    """One call of an op: ``op(input, *args, **kwargs)``.

    >>> import fnx
    >>> s = SampleInput(fnx.ones(2, 3), 2.5, alpha=2)
    >>> s
    SampleInput(float32[2, 3], 2.5, alpha=2)
    """

    __slots__ = ("input", "args", "kwargs", "kink")

    def __init__(self, input, *args, **kwargs):
        self.input = input
        self.args = args
        self.kwargs = kwargs
        self.kink = None

    def at_kink(self, why: str) -> "SampleInput":
        """Mark the sample as sitting where the op is not differentiable (``why``): the
        gradient check skips it, the other checks run.  Returns the sample."""
        self.kink = why
        return self

    def all_args(self) -> tuple:
        return (self.input,) + self.args

    def map_tensors(self, fn, kwarg_fn=None) -> "SampleInput":
        """A new sample with ``fn`` applied to every tensor (in lists too); ``kwarg_fn(name,
        value)`` may replace non-tensor keyword arguments (e.g. ``device=``)."""
        kw = {}
        for k, v in self.kwargs.items():
            v = _map(fn, v)
            kw[k] = kwarg_fn(k, v) if kwarg_fn is not None else v
        out = SampleInput(_map(fn, self.input), *(_map(fn, a) for a in self.args), **kw)
        out.kink = self.kink
        return out

    def numpy(self):
        """``(args, kwargs)`` for a reference: tensors become NumPy arrays (copies)."""
        def conv(t):
            return np.array(t.numpy(force=True), copy=True)
        args = tuple(_map(conv, a) for a in self.all_args())
        kwargs = {k: _map(conv, v) for k, v in self.kwargs.items()}
        return args, kwargs

    def __repr__(self):
        parts = [_describe(a) for a in self.all_args()]
        parts += [f"{k}={_describe(v)}" for k, v in self.kwargs.items()]
        return f"SampleInput({', '.join(parts)})"


def _describe(x) -> str:
    if _is_tensor(x):
        s = f"{x.dtype.name}{list(x.shape)}"
        dev = x.device.type
        if dev != "cpu":
            s += f"@{dev}"
        if dev == "cpu" and x.ndim and not x.is_contiguous():
            s += "(non-contiguous)"
        return s
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_describe(y) for y in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return repr(x)


class ErrorInput:
    """A sample the op must reject with ``error_type`` (message matching regex ``match``).
    ``meta=True``: the meta function must raise the same type (shape/dtype errors);
    ``False`` for errors that depend on values (integer division by zero)."""

    __slots__ = ("sample", "error_type", "match", "meta")

    def __init__(self, sample, error_type=RuntimeError, match=None, meta=True):
        self.sample = sample
        self.error_type = error_type
        self.match = match
        self.meta = meta

    def __repr__(self):
        t = self.error_type
        names = "/".join(x.__name__ for x in t) if isinstance(t, tuple) else t.__name__
        return f"ErrorInput({self.sample!r}, {names}, {self.match!r})"


class Known:
    """A known failure, stored as data: ``check`` (one of ``CHECKS``) fails for ``dtypes``
    (None: every dtype) on ``device_type`` (None: every device), for the lowering check
    with ``target`` (None: every target).  Tests run it as a strict
    xfail, so the entry must be removed when the failure is fixed."""

    __slots__ = ("check", "dtypes", "reason", "device_type", "target")

    def __init__(self, check, dtypes=None, reason="", device_type=None, target=None):
        if check not in CHECKS:
            raise ValueError(f"Known: unknown check {check!r}; checks are {CHECKS}")
        if not reason:
            raise ValueError("Known: give the reason the check fails")
        self.check = check
        self.dtypes = None if dtypes is None else tuple(dtypes)
        self.reason = reason
        self.device_type = device_type
        self.target = target

    def matches(self, check, dtype=None, device_type="cpu", target=None) -> bool:
        return (check == self.check
                and (self.dtypes is None or dtype is None or dtype in self.dtypes)
                and (self.device_type is None or device_type == self.device_type)
                and (self.target is None or target == self.target))

    def __repr__(self):
        return f"Known({self.check!r}, dtypes={self.dtypes}, reason={self.reason!r})"


# --------------------------------------------------------------------------- make_tensor

class _Rng(threading.local):
    gen = None


_rng = _Rng()


def seed_samples(key: str) -> None:
    """Make the following ``make_tensor`` calls deterministic for ``key`` (an op name)."""
    _rng.gen = np.random.default_rng(zlib.crc32(key.encode()))


def _gen():
    if _rng.gen is None:
        _rng.gen = np.random.default_rng(0)
    return _rng.gen


def make_tensor(shape, dtype, device="cpu", low=None, high=None, exclude_zero=False,
                noncontiguous=False):
    """A tensor of random values in ``[low, high)``: floats default to [-9, 9], signed
    integers to [-9, 10), uint8 to [0, 10), bool to {False, True}.  ``exclude_zero``
    replaces zeros by 1 (integers) or the smallest positive normal number (floats).
    ``noncontiguous`` returns a strided view (every other element of the last dim).

    >>> import fnx
    >>> t = make_tensor((2, 3), fnx.int8, low=0, high=5, exclude_zero=True)
    >>> t.shape, t.dtype, bool((t.numpy() > 0).all())
    (fnx.Size([2, 3]), fnx.int8, True)
    >>> make_tensor((2, 3), fnx.float32, noncontiguous=True).is_contiguous()
    False
    """
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    g = _gen()
    alloc = shape[:-1] + (shape[-1] * 2,) if noncontiguous and shape else shape
    npd = dtype.numpy
    if dtype is D.bool:
        a = g.integers(0, 2, alloc).astype(np.bool_)
    elif dtype.is_floating_point or dtype.is_complex:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        a = g.uniform(lo, hi, alloc)
        if dtype.is_complex:
            a = a + 1j * g.uniform(lo, hi, alloc)
        a = np.asarray(a).astype(npd)
        if exclude_zero:
            tiny = np.finfo(np.float32 if dtype is D.bfloat16 else npd).tiny
            a[a == 0] = tiny
    else:
        info = np.iinfo(npd)
        lo = (0 if not dtype.is_signed else -9) if low is None else int(np.ceil(low))
        hi = 10 if high is None else int(np.ceil(high))
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max) + 1)
        a = g.integers(lo, hi, alloc).astype(npd)
        if exclude_zero:
            a[a == 0] = 1
    t = fnx.from_numpy(a)
    if noncontiguous and shape:
        t = t[..., ::2]
    if str(device) != "cpu":
        t = t.to(device)
    return t



def make_transposed(shape, dtype, device="cpu", **kw):
    """A transposed (non-contiguous) tensor of ``shape`` (rank >= 2): ``make_tensor`` of
    the last two dims swapped, viewed back.

    >>> import fnx
    >>> t = make_transposed((2, 3), fnx.float32)
    >>> tuple(t.shape), t.is_contiguous()
    ((2, 3), False)
    """
    s = list(shape)
    s[-1], s[-2] = s[-2], s[-1]
    return make_tensor(s, dtype, device, **kw).transpose(-1, -2)


# --------------------------------------------------------------------------- OpInfo

def op_name(op) -> str:
    """The entry name of an op: ``add.Tensor``, ``abs.default``, ``prims.add.default``."""
    base = f"{op.name}.{op.overload_name}"
    return base if op.namespace == "aten" else f"{op.namespace}.{base}"


class OpInfo:
    """Everything the tests need to know about one operator overload.

    - ``op``: the ``OpOverload`` (``fnx.ops.aten.add.Tensor``).
    - ``ref``: an independent NumPy/SciPy reference taking NumPy arrays (and the same
      non-tensor arguments) and returning arrays with PyTorch's result dtype and shape
      (see ``fnx.testing.reference_dtypes``); None when no reference exists (only the
      other checks run).
    - ``dtypes``: the input dtypes the samples are made in.
    - ``sample_inputs(info, device, dtype)``: yields ``SampleInput``s.
    - ``error_inputs(info, device)``: yields ``ErrorInput``s (optional).
    - ``tols``: ``{dtype: (rtol, atol)}`` overriding ``DEFAULT_TOLS``.
    - ``known_failures``: ``Known`` entries (strict xfails).
    - ``skips``: ``{check: reason}`` for checks that do not apply to this op (not run).
    - ``nondeterministic``: values are not compared (shapes and dtypes still are).
    - ``variants``: derive entries for the op's in-place and ``out=`` variants.
    - ``variant``, ``base``: set on derived entries ("inplace"/"out" and the functional one).
    """

    def __init__(self, op, ref=None, dtypes=ALL_DTYPES, sample_inputs=None, *, name=None,
                 error_inputs=None, tols=None, known_failures=(), skips=None,
                 nondeterministic=False, variants=True, variant="functional", base=None,
                 variant_known=None):
        if sample_inputs is None:
            raise TypeError(f"OpInfo({op}): sample_inputs is required")
        self.op = op
        self.name = name or op_name(op)
        self.ref = ref
        self.dtypes = tuple(dtypes)
        self.sample_inputs_fn = sample_inputs
        self.error_inputs_fn = error_inputs
        self.tols = dict(DEFAULT_TOLS)
        self.tols.update(tols or {})
        self.known_failures = list(known_failures)
        self.skips = dict(skips or {})
        self.nondeterministic = nondeterministic
        self.variants = variants
        self.variant = variant
        self.base = base
        # known failures of the derived variants: {"inplace": [Known...], "out": [...]}
        self.variant_known = dict(variant_known or {})

    # -- samples
    def sample_inputs(self, device="cpu", dtype=D.float32) -> list:
        """The samples for ``dtype``, made on ``device``; deterministic for the op."""
        seed_samples(f"{self.name}/{dtype}")
        return list(self.sample_inputs_fn(self, device, dtype))

    def error_inputs(self, device="cpu") -> list:
        if self.error_inputs_fn is None:
            return []
        seed_samples(f"{self.name}/errors")
        return list(self.error_inputs_fn(self, device))

    # -- data
    def tol(self, dtype):
        return self.tols.get(dtype, (0.0, 0.0))

    def known(self, check, dtype=None, device_type="cpu", target=None):
        for k in self.known_failures:
            if k.matches(check, dtype, device_type, target):
                return k
        return None

    def applicable_checks(self) -> tuple:
        """The checks that apply to this entry (level- and variant-dependent)."""
        level = _level(self.op)
        out = ["reference", "meta"]
        # in-place and out= variants reach the lower levels through functionalization
        # (their functional op, decomposed, plus a write-back): checked that way
        if level == "aten":
            out.append("decomp_core")
        if level != "prims":
            out.append("decomp_prims")
        if self.error_inputs_fn is not None:
            out.append("errors")
        if self.variant in ("functional", "inplace") and not self.nondeterministic:
            out.append("grad")
        if self.variant == "functional":
            out.append("lowering")      # run only when asked for (with a target)
        return tuple(c for c in out if c not in self.skips)

    def __repr__(self):
        return f"OpInfo({self.name})"


# --------------------------------------------------------------------------- registry

op_db: list = []            # the hand-written entries, in registration order
by_name: dict = {}


def register(*infos):
    """Add entries to the database (family modules call this at import time)."""
    for info in infos:
        if info.name in by_name:
            raise ValueError(f"OpInfo for {info.name} registered twice")
        by_name[info.name] = info
        op_db.append(info)
    return infos[0] if len(infos) == 1 else infos
