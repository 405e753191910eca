"""``fnx.export``: a model as a portable program, as ``torch.export``.

``export(model, args)`` traces the model into a functional fnx graph with its weights as
named inputs and lowers it to StableHLO through ``jax.export``; ``save``/``load`` write
and read it in a safe format; ``Dim`` marks symbolic dimensions. See ``program.py`` (the
program and its signature) and ``archive.py`` (the file format).

>>> import fnx
>>> ep = fnx.export.export(lambda x: x.exp(), (fnx.zeros(2),))
>>> print(ep)  # doctest: +ELLIPSIS
ExportedProgram:
    def forward(x: "f32[2]"):
        exp = fnx.ops.aten.exp.default(x)  # f32[2]
        return exp
Graph signature:
    # input  user_input: x  float32[2]
    # output user_output: output_0  float32[2]
"""
from .archive import load, save
from .dims import Dim
from .program import ExportedProgram, ExportGraphSignature, InputSpec, OutputSpec, export

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "InputSpec", "OutputSpec",
           "Dim", "save", "load"]
