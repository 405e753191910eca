"""How much of PyTorch's public API fnx provides: each name of ``fnx/testing/torch_names.txt``
(PyTorch 2.13's public callables of ``torch``, ``torch.Tensor``, ``torch.nn.functional``,
``torch.linalg``, ``torch.fft`` and ``torch.special``, listed once from ``dir()``; no torch
import here) looked up on fnx's namespace of the same place. The names listed in
``torch_names_not_applicable.txt`` (vendor kernel libraries, quantized dtypes, TorchScript
internals, devices fnx has no backend for) have no meaning here and are counted apart:
"applicable" is the figure that should reach every name.

>>> report = torch_api_coverage()
>>> report["torch.linalg"]["provided"] <= report["torch.linalg"]["total"]
True
>>> "add" in report["torch"]["missing"]
False
"""
from __future__ import annotations

import importlib.resources
import sys

from .. import api, fft, linalg, special
from ..core.tensor import Tensor
from ..nn import functional

__all__ = ["torch_api_coverage", "render_torch_api"]

_SPACES = {"torch": api, "torch.Tensor": Tensor, "torch.nn.functional": functional,
           "torch.linalg": linalg, "torch.fft": fft, "torch.special": special}


def _names(file="torch_names.txt") -> dict:
    text = importlib.resources.files("fnx.testing").joinpath(file).read_text()
    out: dict = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            space, name = line.split()
            out.setdefault(space, []).append(name)
    return out


def _has(space, name) -> bool:
    obj = _SPACES[space]
    if space == "torch":
        # the package's own names too (fnx.compile, fnx.nn, ...): fnx is loaded whenever
        # one of its modules is, so it is read from sys.modules, not imported upward
        return hasattr(obj, name) or hasattr(sys.modules["fnx"], name)
    return hasattr(obj, name)


def torch_api_coverage() -> dict:
    """``{namespace: {"provided", "total", "missing", "not_applicable"}}`` over the
    checked-in name list; ``missing`` leaves out the names without a meaning in fnx
    (``not_applicable``: those fnx does not provide)."""
    report = {}
    na = _names("torch_names_not_applicable.txt")
    for space, names in _names().items():
        skip = set(na.get(space, ()))
        absent = [n for n in names if not _has(space, n)]
        report[space] = {"provided": len(names) - len(absent), "total": len(names),
                         "missing": [n for n in absent if n not in skip],
                         "not_applicable": [n for n in absent if n in skip]}
    return report


def render_torch_api(report: dict, show_missing: bool = True) -> str:
    lines = []
    provided = sum(r["provided"] for r in report.values())
    total = sum(r["total"] for r in report.values())
    lines.append(f"{'':22s} {'all names':>11s}   {'applicable':>11s}")
    for space, r in report.items():
        na = len(r.get("not_applicable", ()))
        lines.append(f"{space:22s} {r['provided']:4d} / {r['total']:4d}   "
                     f"{r['provided']:4d} / {r['total'] - na:4d}")
    na = sum(len(r.get("not_applicable", ())) for r in report.values())
    lines.append(f"{'all':22s} {provided:4d} / {total:4d}   {provided:4d} / {total - na:4d}"
                 f"  ({100 * provided / total:.0f}% of all, "
                 f"{100 * provided / (total - na):.0f}% of applicable; "
                 f"{na} names have no meaning in fnx: fnx/testing/"
                 f"torch_names_not_applicable.txt)")
    if show_missing:
        for space, r in report.items():
            if r["missing"]:
                lines.append(f"\nmissing in {space}: {' '.join(r['missing'])}")
    return "\n".join(lines)
