"""The public API as help(), inspect and IDEs see it: real signatures, names, docstrings, and
the checked-in stubs (``fnx/api/__init__.pyi``, ``fnx/core/tensor.pyi``) up to date."""
import ast
import doctest
import importlib.metadata
import inspect
import subprocess
import sys
import types
from pathlib import Path

import pytest

import fnx
import fnx.api
from fnx.api import math as fmath
from fnx.api.stubs import STUBS

ROOT = Path(fnx.__file__).resolve().parent.parent
REGENERATE = "python -m fnx.api.stubs"


def _public_functions():
    """The functions of ``fnx.api.__all__`` that fnx.api defines, by public name."""
    return {n: f for n in fnx.api.__all__
            if isinstance(f := getattr(fnx.api, n), types.FunctionType)
            and f.__module__.startswith("fnx.api.")}


def _tensor_methods():
    """``Tensor``'s own callables and property getters, by name (the op calls bound as
    operators, which carry the op's name, aside)."""
    out = {}
    for n, v in vars(fnx.Tensor).items():
        f = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
        if isinstance(f, types.FunctionType) and f.__module__ is not None:
            out[n] = f
    return out


# ----------------------------------------------------------------------------- signatures

def test_public_functions_are_bound_under_their_own_name_with_an_example():
    functions = _public_functions()
    assert len(functions) > 200
    for name, f in functions.items():
        module = sys.modules[f.__module__]
        # The name a reader (and pickle, and pydoc) looks up is the function itself.
        assert getattr(module, f.__name__) is f, (name, f.__module__, f.__name__)
        assert f.__qualname__ == f.__name__, name
        assert name in module.__all__, name
        assert f.__doc__ and ">>> " in f.__doc__, f"{name} has no docstring example"
        assert list(inspect.signature(f).parameters)[:1] != ["self"], name


def test_the_generated_families_have_pytorch_signatures():
    expected = {
        fnx.exp: "(input: 'Tensor', *, out: 'Tensor | None' = None) -> 'Tensor'",
        fnx.add: "(input: 'Tensor', other, *, alpha=1, out: 'Tensor | None' = None) -> 'Tensor'",
        fnx.mul: "(input: 'Tensor', other, *, out: 'Tensor | None' = None) -> 'Tensor'",
        fnx.Tensor.add: "(self, other, *, alpha=1) -> 'Tensor'",
        fnx.Tensor.exp_: "(self) -> 'Tensor'",
        fnx.Tensor.float: "(self, memory_format=None) -> 'Tensor'",
        fnx.Tensor.sum: "(self, dim=None, keepdim=False, *, dtype=None)",
        fnx.sum: "(input, dim=None, keepdim=False, *, dtype=None)",
    }
    for f, sig in expected.items():
        assert str(inspect.signature(f)) == sig, f
    for name, _, _ in fmath.E.UNARY:
        f = getattr(fmath, name)
        assert (f.__name__, f.__module__) == (name, "fnx.api.math")
        assert getattr(fnx.Tensor, name).__qualname__ == f"Tensor.{name}"


def test_tensor_methods_have_method_signatures_and_docstrings():
    methods = _tensor_methods()
    assert len(methods) > 300
    for name, f in methods.items():
        params = list(inspect.signature(f).parameters)
        assert params[:1] in (["self"], ["cls"]), (name, params)
        if not name.startswith("_"):
            assert f.__doc__ and ">>> " in f.__doc__, f"Tensor.{name} has no docstring example"
    # A method twin shares its function's code: keyword calls use the method's names.
    x = fnx.tensor([[1, 2], [3, 4]])
    assert fnx.Tensor.sum(self=x, dim=0).tolist() == [4, 6]
    assert fnx.Tensor.sum.__code__.co_code == fnx.sum.__code__.co_code
    with pytest.raises(TypeError):
        fnx.Tensor.sum(input=x)


def test_tensor_method_examples_run():
    """Each distinct Tensor docstring's example (the generated methods' are nowhere else)."""
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    docs = {f.__doc__: f"Tensor.{n}" for n, f in sorted(_tensor_methods().items())
            if f.__doc__ and ">>> " in f.__doc__}
    for doc, name in docs.items():
        for test in finder.find(doc, name, globs={}):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# ----------------------------------------------------------------------------- stubs

def test_checked_in_stubs_match_a_regeneration(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "fnx.api.stubs", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for rel in STUBS:
        fresh = (tmp_path / rel).read_text(encoding="utf-8")
        checked_in = (ROOT / rel).read_text(encoding="utf-8")
        assert fresh == checked_in, (f"{rel} is stale: regenerate the stubs with "
                                     f"`{REGENERATE}` (from {ROOT}) and commit them")


@pytest.mark.parametrize("rel", sorted(STUBS))
def test_stubs_are_valid_python(rel):
    source = (ROOT / rel).read_text(encoding="utf-8")
    compile(ast.parse(source, rel), rel, "exec")
    assert all(len(line) <= 100 for line in source.splitlines()), rel


def _stub_names(body):
    return {n.name if isinstance(n, (ast.FunctionDef, ast.ClassDef)) else n.target.id
            for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AnnAssign))}


def test_tensor_stub_lists_every_attribute_the_layers_bind():
    tree = ast.parse((ROOT / "fnx/core/tensor.pyi").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    listed = _stub_names(cls.body)
    own = set(dir(fnx.Tensor)) - set(dir(object)) - {"__dict__", "__weakref__", "__module__",
                                                     "__annotations__"}
    assert own - listed == set()
    assert {"__add__", "__getitem__", "__repr__", "__reduce_ex__", "backward", "exp", "sum",
            "shape", "T", "_data"} <= listed


def test_namespace_stub_declares_all_of_fnx_api():
    source = (ROOT / "fnx/api/__init__.pyi").read_text(encoding="utf-8")
    tree = ast.parse(source)
    declared = _stub_names(tree.body) | {a.asname for n in tree.body
                                         if isinstance(n, ast.ImportFrom) for a in n.names}
    stub_all = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and n.targets[0].id == "__all__")
    assert stub_all == fnx.api.__all__
    assert set(stub_all) - declared == set()
    assert "\ndef add(input: Tensor, other, *, alpha=1, out: Tensor | None = None)" in source


def test_version_is_the_installed_packages_and_compares_by_number():
    assert fnx.__version__ == importlib.metadata.version("fnx")
    v = fnx.version.Version("0.10.1")
    assert v > "0.9" and v >= (0, 10) and v < (1,) and v == (0, 10, 1) and v != "0.10"
    assert fnx.version.Version("2.0") == (2,) and fnx.version.hip is None
    assert fnx.version.cuda is None or fnx.version.cuda[0].isdigit()
