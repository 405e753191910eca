"""ARCHITECTURE.md stays true: every path it names exists, every part of the package is on
its map, the layers it lists are the import contract's, and what it says about one
operator (``aten.gelu``) is where the code puts it."""
import inspect
import pathlib
import re
import tomllib

import fnx
import fnx.testing as ft
from fnx.graph.decompose import decompose
from fnx.lower import get_target

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = (ROOT / "ARCHITECTURE.md").read_text()
GELU = fnx.ops.aten.gelu.default


def _row(what: str) -> str:
    """The text of the gelu table's row that starts with ``what``."""
    line = next(ln for ln in DOC.splitlines() if ln.startswith(f"| {what}"))
    return line.split("|")[2]


def _named_file(text: str) -> pathlib.Path:
    return ROOT / re.search(r"`(fnx/[\w/]+\.py)`", text).group(1)


def test_every_path_it_names_exists():
    paths = set(re.findall(r"`((?:fnx|tests|benchmarks|examples)/[\w/.<>-]*)`", DOC))
    missing = [p for p in sorted(paths) if "<" not in p and not (ROOT / p.rstrip("/")).exists()]
    assert paths and missing == []


def test_every_part_of_the_package_is_on_the_map():
    parts = [p.name for p in (ROOT / "fnx").iterdir()
             if not p.name.startswith("__") and (p.is_dir() or p.suffix == ".py")]
    unnamed = [p for p in sorted(parts) if f"fnx/{p}" not in DOC]
    assert unnamed == []


def test_its_layers_are_the_import_contracts():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["type"] == "layers")
    for layer in contract["layers"]:
        for module in re.split(r"[|:]", layer):
            assert f"fnx/{module.strip().replace('.', '/')}" in DOC, module


def test_gelu_lives_where_it_says():
    defined = _named_file(_row("definition"))
    assert pathlib.Path(inspect.getsourcefile(GELU.meta)) == defined
    assert pathlib.Path(inspect.getsourcefile(GELU.decomposition)) == defined
    assert pathlib.Path(inspect.getsourcefile(GELU.derivative)) == defined
    assert "at its definition" in _row("derivative")
    assert ft.entry_for(GELU) is not None
    assert "aten.gelu.default" in _named_file(_row("tests")).read_text()    # its entry


def test_gelu_lowers_through_its_prims():
    # "it decomposes to prims, each with a jax.lax rule in <file>"
    graph = decompose(lambda x: fnx.nn.functional.gelu(x), fnx.ones(3), to="prims")
    jax = get_target("jax")
    prims = {n.target for n in graph.calls()}
    assert prims and all("prim" in op.tags and jax.has_rule(op) for op in prims)
    rules = _named_file(_row("lowering"))
    assert all(pathlib.Path(inspect.getsourcefile(jax.rules[op])) == rules for op in prims)
