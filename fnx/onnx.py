"""``fnx.onnx``: importable, so PyTorch programs that import ``torch.onnx`` run; fnx has no
ONNX exporter (``fnx.compile`` lowers programs to JAX/XLA), so ``export`` raises when called.

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
        "fnx.onnx.export is not supported; fnx has no ONNX exporter. Use fnx.compile (a "
        "JAX/XLA program) to compile the model, or save its weights with fnx.save")


def is_in_onnx_export() -> bool:
    """False: fnx never exports to ONNX."""
    return False
