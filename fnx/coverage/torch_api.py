"""How much of PyTorch's public API fnx provides: each name of ``fnx/testing/torch_names.txt``
(PyTorch 2.13's public callables of ``torch``, ``torch.Tensor``, ``torch.nn.functional``,
``torch.linalg``, ``torch.fft`` and ``torch.special``, listed once from ``dir()``; no torch
import here) looked up on fnx's namespace of the same place.

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


def _names() -> dict:
    text = importlib.resources.files("fnx.testing").joinpath("torch_names.txt").read_text()
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
    """``{namespace: {"provided", "total", "missing"}}`` over the checked-in name list."""
    report = {}
    for space, names in _names().items():
        missing = [n for n in names if not _has(space, n)]
        report[space] = {"provided": len(names) - len(missing), "total": len(names),
                         "missing": missing}
    return report


def render_torch_api(report: dict, show_missing: bool = True) -> str:
    lines = []
    provided = sum(r["provided"] for r in report.values())
    total = sum(r["total"] for r in report.values())
    for space, r in report.items():
        lines.append(f"{space:22s} {r['provided']:4d} / {r['total']:4d}")
    lines.append(f"{'all':22s} {provided:4d} / {total:4d}  ({100 * provided / total:.0f}%)")
    if show_missing:
        for space, r in report.items():
            if r["missing"]:
                lines.append(f"\nmissing in {space}: {' '.join(r['missing'])}")
    return "\n".join(lines)
