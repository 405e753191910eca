"""``repr(tensor)`` as PyTorch prints it, and ``fnx.set_printoptions``.

The rules, on the (summarized) values of a tensor:
- integers and bools print as Python does, right-aligned to the widest value;
- floats whose finite nonzero values are all integers print as ``1.`` (``int mode``);
  otherwise with ``precision`` decimals (``0.2500``);
- scientific notation when max/min of the nonzero finite magnitudes exceeds 1000, the
  max exceeds 1e8, or (not in int mode) the min is below 1e-4;
- more than ``threshold`` elements: only ``edgeitems`` rows/columns at each edge, ``...``;
- nested rows align under their opening bracket; lines wrap at ``linewidth``;
- suffixes: ``dtype=`` unless the default float dtype (or its complex), int64 or bool;
  ``device=`` off the cpu; ``grad_fn=<...>`` or ``requires_grad=True``; meta tensors
  print ``...`` and their size; empty tensors ``[]`` with the size unless 1-dim.

>>> import fnx
>>> fnx.tensor([[1., 2.5], [3., 4.]])
tensor([[1.0000, 2.5000],
        [3.0000, 4.0000]])
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dtype as D
from ..core.meta_array import MetaArray
from ..core.tensor import tensor_method

__all__ = ["format_tensor", "set_printoptions", "get_printoptions", "printoptions"]


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set how tensors print, as ``torch.set_printoptions``.

    ``profile`` is ``"default"``, ``"short"`` or ``"full"``; ``sci_mode`` True/False forces
    scientific notation on or off, None (the default, reset on every call) decides per tensor.

    >>> import fnx
    >>> fnx.set_printoptions(precision=2); fnx.tensor([1.2345])
    tensor([1.23])
    >>> fnx.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: unknown profile '{profile}'; expected one of "
                             f"{sorted(_PROFILES)}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = int(precision)
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = int(edgeitems)
    if linewidth is not None:
        PRINT_OPTS.linewidth = int(linewidth)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as keyword arguments for ``set_printoptions``."""
    return {k: getattr(PRINT_OPTS, k) for k in
            ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


class printoptions:
    """Context manager: ``with printoptions(precision=2): print(t)``."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def __enter__(self):
        self.saved = get_printoptions()
        set_printoptions(**self.kwargs)

    def __exit__(self, *exc):
        set_printoptions(**self.saved)


# ---------------------------------------------------------------------------- values

class _Formatter:
    """Decides int/fixed/scientific mode and the column width from a set of values."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
        else:
            wide = flat.astype(np.float64)
            vals = wide[np.isfinite(wide) & (wide != 0)]
            if vals.size:
                mags = np.abs(vals)
                lo, hi = float(mags.min()), float(mags.max())
                self.int_mode = bool(np.all(vals == np.ceil(vals)))
                if self.int_mode:
                    self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
                    fmt = f"{{:.{p}e}}" if self.sci_mode else "{:.0f}"
                    extra = 0 if self.sci_mode else 1      # the "." after an integer
                else:
                    self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                    fmt = f"{{:.{p}e}}" if self.sci_mode else f"{{:.{p}f}}"
                    extra = 0
                for v in vals.tolist():
                    self.max_width = max(self.max_width, len(fmt.format(v)) + extra)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                s = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{value:.0f}"
                if math.isfinite(value):
                    s += "."
            else:
                s = f"{value:.{p}f}"
        else:
            s = str(value)
        return " " * (self.max_width - len(s)) + s


def _format_value(v, f1, f2):
    if f2 is None:
        return f1.format(v)
    real = f1.format(v.real)
    imag = (f2.format(v.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(a, indent, summarize, f1, f2):
    element_length = f1.width() + 2 + (f2.width() + 1 if f2 is not None else 0)
    per_line = max(1, int((PRINT_OPTS.linewidth - indent) // element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        items = ([_format_value(v, f1, f2) for v in a[:edge].tolist()] + [" ..."] +
                 [_format_value(v, f1, f2) for v in a[-edge:].tolist()])
    else:
        items = [_format_value(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _format_value(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    edge = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * edge:
        rows = ([_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(edge)] +
                ["..."] +
                [_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(n - edge, n)])
    else:
        rows = [_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _summarized(a):
    """The values that will be shown, for the formatter's width and mode."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:edge], a[-edge:]]) if a.shape[0] > 2 * edge else a
    if not edge:
        return a.reshape(-1)[:0]
    rows = list(a[:edge]) + list(a[-edge:]) if a.shape[0] > 2 * edge else list(a)
    return np.concatenate([_summarized(r).reshape(-1) for r in rows])


def _body(a, indent):
    summarize = a.size > PRINT_OPTS.threshold
    if a.dtype.kind == "f" and a.dtype.itemsize < 4 or a.dtype.kind == "V" or \
            str(a.dtype) == "bfloat16":
        a = a.astype(np.float32)            # half types print through float
    shown = _summarized(a) if summarize else a
    if a.dtype.kind == "c":
        return _nested_str(a, indent, summarize, _Formatter(shown.real), _Formatter(shown.imag))
    return _nested_str(a, indent, summarize, _Formatter(shown), None)


# ---------------------------------------------------------------------------- tensors

def _host_array(t):
    arr = t._data
    if isinstance(arr, np.ndarray):
        return arr
    try:
        host = np.asarray(arr)            # JAX arrays and other array-likes
    except Exception:                     # noqa: BLE001 - any backend: ask it for a copy
        host = None
    if host is None or host.dtype == object:   # not an array-like: the backend's _to_copy
        host = np.asarray(t.to("cpu")._data)
    return host


def _has_no_data(t):
    """Tensors of a trace carry shapes only (a MetaArray), whatever their device."""
    return isinstance(t._data, MetaArray)


def _grad_fn_name(t):
    gf = t.grad_fn
    if gf is None:
        return None
    name = getattr(gf, "name", None)
    if callable(name):
        try:
            return str(name()).rsplit("::", 1)[-1]
        except TypeError:
            pass
    return type(gf).__name__


def _add_suffixes(text, suffixes, indent, force_newline=False):
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for i, s in enumerate(suffixes):
        if last_line + len(s) + 2 > PRINT_OPTS.linewidth or (force_newline and i == 0):
            parts.append(",\n" + " " * indent + s)
            last_line = indent + len(s)
        else:
            parts.append(", " + s)
            last_line += len(s) + 2
    parts.append(")")
    return "".join(parts)


def _component_str(name, c, indent):
    prefix = f"{name}=tensor("
    a = _host_array(c)
    body = _body(a, indent + len(prefix)) if a.size else "[]"
    if a.size == 0 and a.ndim != 1:
        body += f", size={tuple(a.shape)}"
    return prefix + body + ")"


def _format_sparse(t, prefix):
    """PyTorch's ``repr`` of a sparse tensor: its components, then size, nnz and layout
    (COO's suffixes start on a new line, as PyTorch's)."""
    indent = len(prefix)
    st = t._data
    if st.indices is not None:
        names = (("indices", st.indices), ("values", st.values))
    else:
        c, p = (("crow", "col") if st.layout.name in ("sparse_csr", "sparse_bsr")
                else ("ccol", "row"))
        names = ((f"{c}_indices", st.compressed), (f"{p}_indices", st.plain),
                 ("values", st.values))
    body = (",\n" + " " * indent).join(_component_str(n, x, indent) for n, x in names)
    suffixes = [f"size={tuple(st.shape)}", f"nnz={st.nnz}"]
    if t._dtype is not D.get_default_dtype():
        suffixes.append(f"dtype={t._dtype}")
    suffixes.append(f"layout={t.layout}")
    gf = _grad_fn_name(t)
    if gf is not None:
        suffixes.append(f"grad_fn=<{gf}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, force_newline=st.indices is not None)


def format_tensor(t, prefix="tensor(") -> str:
    """PyTorch's ``repr`` of ``t``."""
    if getattr(t._data, "layout", None) is not None:
        return _format_sparse(t, prefix)
    indent = len(prefix)
    suffixes = []
    dev = t._device
    dtype = t._dtype
    default = D.get_default_dtype()
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    shape = tuple(t._data.shape)
    numel = math.prod(shape)
    if dev.type == "meta" or _has_no_data(t):
        suffixes.append(f"size={shape}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype}")
        body = "..."
    elif numel == 0:
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if dtype not in (default, D.default_complex_dtype(), D.int64, D.bool):
            suffixes.append(f"dtype={dtype}")
        body = _body(_host_array(t), indent)
    gf = _grad_fn_name(t)
    if gf is not None:
        suffixes.append(f"grad_fn=<{gf}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


@tensor_method()
def __repr__(self):
    return format_tensor(self)


@tensor_method()
def __format__(self, spec):
    if self.ndim == 0 and spec:
        return self.item().__format__(spec)
    return object.__format__(self, spec) if spec else repr(self)
