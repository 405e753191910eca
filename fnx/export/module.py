"""``ExportedProgram.module()``: the exported program as an ``fnx.nn.Module``.

Its parameters and buffers are the program's state, registered under the original
module's names (``"0.weight"`` lives in a child module ``0``), so ``state_dict()`` has the
original's keys and ``load_state_dict`` works; ``forward`` runs the program (StableHLO
under JAX) with the module's current state. It runs what was exported, so, as PyTorch's,
``train()`` and ``eval()`` raise ``NotImplementedError`` (export the module again in the
other mode instead); its outputs are not differentiable.

>>> import fnx
>>> m = fnx.nn.Sequential(fnx.nn.Linear(2, 3)).eval()
>>> em = fnx.export.export(m, (fnx.ones(1, 2),)).module()
>>> isinstance(em, fnx.nn.Module), sorted(em.state_dict()) == sorted(m.state_dict())
(True, True)
"""
from __future__ import annotations

from ..nn import Module, Parameter

__all__ = ["ExportedModule"]


class ExportedModule(Module):
    """An ``nn.Module`` running an ``ExportedProgram`` (see the module docstring)."""

    def __init__(self, program):
        super().__init__()
        object.__setattr__(self, "_program", program)     # not a submodule or state
        self._constants = dict(program.constants)
        for spec in program.graph_signature.input_specs:
            if spec.kind not in ("parameter", "buffer"):
                continue
            owner, leaf = self._owner(spec.name)
            if spec.kind == "parameter":
                t = program.state_dict[spec.name]
                p = t if isinstance(t, Parameter) else Parameter(t, requires_grad=False)
                owner.register_parameter(leaf, p)
            else:
                t = program.state_dict.get(spec.name)
                if t is None:
                    t = program.constants[spec.name]
                owner.register_buffer(leaf, t, persistent=spec.persistent is not False)

    def train(self, mode: bool = True):
        """Refused: the mode was fixed at export (``NotImplementedError``, as PyTorch)."""
        raise NotImplementedError("Calling train() is not supported yet.")

    def eval(self):
        """Refused: the mode was fixed at export (``NotImplementedError``, as PyTorch)."""
        raise NotImplementedError("Calling eval() is not supported yet.")

    def _owner(self, name):
        """The (created on demand) child module holding ``name``, and the leaf name."""
        *path, leaf = name.split(".")
        owner = self
        for part in path:
            child = owner._modules.get(part)
            if child is None:
                child = Module()
                owner.add_module(part, child)
            owner = child
        return owner, leaf

    def _state(self, spec):
        if spec.kind == "parameter":
            return self.get_parameter(spec.name)
        if spec.kind == "buffer":
            return self.get_buffer(spec.name)
        return self._constants[spec.name]

    def forward(self, *args, **kwargs):
        program = self._program
        return program._run(program._flat_inputs(args, kwargs, self._state))
