"""``fnx.onnx``: importable, so PyTorch programs that import ``torch.onnx`` run; fnx has no
ONNX exporter (its portable format is StableHLO, through ``fnx.export``), so ``export``
raises when called.

>>> import fnx
>>> try:
...     fnx.onnx.export(fnx.nn.Linear(2, 2), (fnx.ones(1, 2),), "model.onnx")
... except NotImplementedError as e:
...     print(str(e).split(";")[0])
fnx.onnx.export is not supported
"""
from __future__ import annotations

__all__ = ["export", "is_in_onnx_export"]


def export(model, args=(), f=None, **kwargs):
    """Not supported: raises ``NotImplementedError``."""
    raise NotImplementedError(
        "fnx.onnx.export is not supported; fnx has no ONNX exporter. Use fnx.export.export "
        "(a portable StableHLO program, saved with fnx.export.save) instead")


def is_in_onnx_export() -> bool:
    """False: fnx never exports to ONNX."""
    return False
