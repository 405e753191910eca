"""``fnx.export.save`` / ``fnx.export.load``: an exported program as one zip archive.

The archive holds three members and nothing executable by Python:

- ``program.stablehlo``: ``jax.export``'s serialization of the StableHLO program;
- ``weights.fnx``: the state dict and constants, written by ``fnx.save`` (JSON plus
  ``.npy`` arrays, read with ``allow_pickle=False``);
- ``export.json``: the signature, the output structure, the Dim ranges, the fnx graph as
  text (for printing), and the SHA-256 of the other two members.

``load`` checks the digests before reading anything else, so a tampered or truncated file
is refused with a ``RuntimeError`` that says so; a loaded program runs without the model's
code (``ExportedProgram.module()``), and its ``to_jax()`` runs under plain JAX.

>>> import fnx, io
>>> ep = fnx.export.export(lambda x: x * 2, (fnx.ones(2),))
>>> buf = io.BytesIO()
>>> fnx.export.save(ep, buf)
>>> _ = buf.seek(0)
>>> fnx.export.load(buf).module()(fnx.tensor([1., 2.]))
tensor([2., 4.])
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile

import jax

from .. import serialization
from .program import ExportedProgram, ExportGraphSignature, InputSpec, OutputSpec

__all__ = ["save", "load"]

FORMAT = "fnx.export/1"
_PROGRAM, _WEIGHTS, _META = "program.stablehlo", "weights.fnx", "export.json"


def save(ep: ExportedProgram, f) -> None:
    """Write ``ep`` to ``f`` (a path or a binary file object)."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"fnx.export.save: expected an ExportedProgram, got "
                        f"{type(ep).__name__}")
    program = ep.to_stablehlo()
    wbuf = io.BytesIO()
    serialization.save({"state_dict": dict(ep.state_dict), "constants": dict(ep.constants)},
                       wbuf)
    weights = wbuf.getvalue()
    sig = ep.graph_signature
    meta = {"format": FORMAT,
            "sha256": {_PROGRAM: hashlib.sha256(program).hexdigest(),
                       _WEIGHTS: hashlib.sha256(weights).hexdigest()},
            "inputs": [s.to_json() for s in sig.input_specs],
            "outputs": [s.to_json() for s in sig.output_specs],
            "out_tree": ep._out_tree, "dims": {k: list(v) for k, v in ep.dims.items()},
            "checks": [list(c) for c in ep._checks], "graph": ep._graph_text}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(_META, json.dumps(meta, indent=1))
        z.writestr(_PROGRAM, program)
        z.writestr(_WEIGHTS, weights)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(out.getvalue())
    else:
        f.write(out.getvalue())


def _refuse(name, why):
    return RuntimeError(f"fnx.export.load: {name!r} {why}; nothing in it was run")


def load(f) -> ExportedProgram:
    """Read a program written by ``save``. Refuses anything else, and any file whose
    contents do not match the digests it was saved with."""
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = set(z.namelist())
            if not {_META, _PROGRAM, _WEIGHTS} <= members:
                raise _refuse(name, f"is not an fnx.export archive (members: "
                                    f"{sorted(members)})")
            meta = json.loads(z.read(_META))
            program, weights = z.read(_PROGRAM), z.read(_WEIGHTS)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, json.JSONDecodeError, KeyError,
            UnicodeDecodeError, EOFError) as e:
        raise _refuse(name, f"is corrupted or not an fnx.export archive ({e})") from None
    fmt = meta.get("format") if isinstance(meta, dict) else None
    if fmt != FORMAT:
        raise _refuse(name, f"has an unknown format {fmt!r} (expected {FORMAT!r})")
    digests = meta.get("sha256", {})
    for member, blob in ((_PROGRAM, program), (_WEIGHTS, weights)):
        if digests.get(member) != hashlib.sha256(blob).hexdigest():
            raise _refuse(name, f"was modified after it was saved ({member} does not match "
                                f"its SHA-256)")
    try:
        exported = jax.export.deserialize(bytearray(program))
        state = serialization.load(io.BytesIO(weights))
        sig = ExportGraphSignature(
            [InputSpec(s["kind"], s["name"], s["shape"], s["dtype"], s.get("persistent"))
             for s in meta["inputs"]],
            [OutputSpec(s["kind"], s["name"], s["shape"], s["dtype"])
             for s in meta["outputs"]])
        dims = {k: tuple(v) for k, v in meta["dims"].items()}
        checks = [tuple(c) for c in meta["checks"]]
        return ExportedProgram(exported, sig, state["state_dict"], state["constants"],
                               meta["out_tree"], dims, graph=None, graph_text=meta["graph"],
                               checks=checks)
    except (KeyError, TypeError, ValueError) as e:
        raise _refuse(name, f"is malformed ({type(e).__name__}: {e})") from None
