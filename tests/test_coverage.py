"""Coverage rules, read from the registry: a test fails when an op lacks a meta function, a
path to prims, or an OpInfo entry.

- every Core ATen overload (shared/reference/core_aten_ops.txt, copied into
  fnx.coverage._core_ops) is defined with PyTorch's schema, tagged "core", has a meta
  function, a decomposition (its path to prims) and an OpInfo entry, except the
  documented ``fnx.coverage.NOT_APPLICABLE`` set;
- every prim has a meta function, a CPU kernel and an OpInfo entry;
- every op with OpInfo samples that is not a prim decomposes to prims (checked on every
  sample and dtype by tests/test_opinfo.py; here through the coverage table's run).

``GAPS`` lists what is missing today, per rule; a listed op runs as a strict xfail, so it
must leave the list when it gets fixed.
"""
import json
import subprocess
import sys
import warnings

import pytest

import fnx
import fnx.testing as ft
from fnx.coverage import NOT_APPLICABLE, _autograd, core_overloads, coverage_rows, render, summarize
from fnx.coverage import torch_api
from fnx.coverage.torch_api import torch_api_coverage
from fnx.dispatch.dispatcher import _ops, all_ops
from fnx.dispatch.schema import parse_schema
from fnx.ir.variants import functional_variant

CORE = sorted(n for n in core_overloads() if n not in NOT_APPLICABLE)
#: core ops that read tensor data into Python: no meta result and no prims equivalent
READS_DATA = {"aten::_local_scalar_dense": "Tensor.item()"}
PRIMS = sorted(op.qualname for op in all_ops() if "prim" in op.tags)

#: Core ATen overloads with no OpInfo entry yet (strict xfails: a name goes once its
#: entry lands).  Every family has entries now.
MISSING_CORE_ENTRIES: set = set()

#: rule -> names of the ops that break it today (strict xfails: remove a name once fixed)
GAPS = {
    "core_tagged": set(),
    "core_decomposition": set(),
    "core_entry": MISSING_CORE_ENTRIES,
    "prim_entry": set(),
    "to_prims": set(),
}


def _param(rule, names):
    return [pytest.param(n, id=n, marks=pytest.mark.xfail(strict=True, reason=f"gap: {rule}"))
            if n in GAPS.get(rule, ()) else pytest.param(n, id=n) for n in names]


def _entry_names():
    return {i.name for i in ft.entries()}


@pytest.fixture(scope="module")
def rows():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {r["op"]: r for r in coverage_rows()}


# ----------------------------------------------------------------------- core ATen

@pytest.mark.parametrize("name", _param("core_defined", CORE))
def test_core_op_is_defined_with_pytorchs_schema(name):
    assert name in _ops, f"{name} is not defined"
    op = _ops[name]
    ref = parse_schema(core_overloads()[name].split("::", 1)[1])
    assert (op.schema.arguments, op.schema.returns) == (ref.arguments, ref.returns), \
        f"{name}: schema {op.schema} differs from PyTorch's {ref}"


@pytest.mark.parametrize("name", _param("core_tagged", CORE))
def test_core_op_is_tagged_core(name):
    assert "core" in _ops[name].tags, f"{name} is in the Core ATen opset but not tagged core"


@pytest.mark.parametrize("name", _param("core_meta", CORE))
def test_core_op_has_a_meta_function(name):
    if name in READS_DATA:
        pytest.skip(f"{READS_DATA[name]}: reads data, no meta result")
    assert _ops[name].meta is not None, f"{name} has no meta function"


@pytest.mark.parametrize("name", _param("core_decomposition", CORE))
def test_core_op_has_a_path_to_prims(name):
    op = _ops[name]
    if name in READS_DATA:
        pytest.skip(f"{READS_DATA[name]}: reads data, outside any op set")
    if op.schema.is_mutable:
        # A writing op reaches prims through functionalization: its functional variant
        # (decomposed) plus a write-back, or its own decomposition traced functionally; the
        # OpInfo decomposition checks run that path.
        functional = functional_variant(op)
        assert op.decomposition is not None or (
            functional is not None and functional.decomposition is not None), \
            f"{name} writes its arguments and has no decomposition, own or functional"
        return
    assert op.decomposition is not None, f"{name} has no decomposition to prims"


@pytest.mark.parametrize("name", _param("core_entry", CORE))
def test_core_op_has_an_opinfo_entry(name):
    assert ft.op_name(_ops[name]) in _entry_names(), f"{name} has no OpInfo entry"


def test_not_applicable_ops_are_documented_and_really_undefined():
    core = core_overloads()
    for name, reason in NOT_APPLICABLE.items():
        assert name in core and reason
        assert name not in _ops, f"{name} is defined now: drop it from NOT_APPLICABLE"


# ----------------------------------------------------------------------- prims

@pytest.mark.parametrize("name", PRIMS)
def test_prim_has_meta_and_cpu_kernel(name):
    op = _ops[name]
    assert op.meta is not None, f"{name} has no meta function"
    assert fnx.dispatch.DispatchKey.CPU in op.kernels, f"{name} has no CPU kernel"


@pytest.mark.parametrize("name", _param("prim_entry", PRIMS))
def test_prim_has_an_opinfo_entry(name):
    assert ft.op_name(_ops[name]) in _entry_names(), f"{name} has no OpInfo entry"


# ----------------------------------------------------------------------- decompositions

def _sampled_non_prims():
    return sorted(i.name for i in ft.entries()
                  if "prim" not in i.op.tags and "decomp_prims" in i.applicable_checks())


@pytest.mark.parametrize("name", _param("to_prims", _sampled_non_prims()))
def test_sampled_op_decomposes_to_prims(name, rows):
    info = ft.entry_for(name)
    row = rows[ft.op_name(info.op)]
    assert row["to_prims"] == "ok", f"{name}: {row['to_prims']}"


def test_every_entry_of_a_non_prim_runs_the_prims_check():
    # an entry may leave the prims check out only by saying why (``skips``), or as a
    # derived in-place/out= variant without a decomposition of its own
    for info in ft.entries():
        if "prim" in info.op.tags or "decomp_prims" in info.skips:
            continue
        if info.variant == "functional":
            assert "decomp_prims" in info.applicable_checks(), info.name


# ----------------------------------------------------------------------- the table

def test_rows_come_from_the_registry(rows):
    names = {ft.op_name(op) for op in all_ops()}
    assert names <= set(rows)
    add = rows["add.Tensor"]
    assert add["level"] == "core" and add["meta"] == "yes" and add["cpu"] == "kernel"
    assert add["to_core"] == "core" and add["to_prims"] == "ok" and add["samples"] > 0
    assert rows["sym_size.int"]["meta"] == "n/a"
    assert rows["prims.add.default"]["to_prims"] == "prim"
    assert "jax" in rows["prims.add.default"]["lowering"]


def test_summary_counts(rows):
    s = summarize(list(rows.values()))
    assert s["ops"] == len(rows)
    assert sum(s["levels"].values()) == s["ops"]
    assert s["opinfo"] == sum(r["samples"] > 0 for r in rows.values())
    assert s["missing_core"] == sorted(n for n in CORE if n not in _ops)


def test_render_formats(rows):
    rs = [rows["add.Tensor"], rows["prims.add.default"]]
    table = render(rs, "table")
    assert "add.Tensor" in table and "ops (" in table and "Core ATen overloads missing" in table
    md = render(rs, "markdown")
    assert md.startswith("| op | schema | level |") and "|---|" in md
    data = json.loads(render(rs, "json"))
    assert [r["op"] for r in data["rows"]] == ["add.Tensor", "prims.add.default"]
    with pytest.raises(ValueError, match="unknown format"):
        render(rs, "html")


def test_cli_json_by_level():
    out = subprocess.run([sys.executable, "-m", "fnx.coverage", "--format", "json", "--level",
                          "prim", "--no-run"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["rows"] and {r["level"] for r in data["rows"]} == {"prim"}
    assert data["summary"]["ops"] == len(data["rows"])


def test_every_op_has_a_way_through_autograd():
    """A formula (its own or its functional twin's), a decomposition to differentiate
    through, or a mark that it is not differentiable: never a silent gap."""
    missing = [op.qualname for op in all_ops()
               if op.namespace in ("aten", "prims") and _autograd(op) == ""]
    assert not missing, missing


def test_not_applicable_names_are_listed_names_fnx_lacks():
    # every name set apart as meaningless here is one of PyTorch's listed names, and fnx
    # does not provide it (a name fnx gives a meaning leaves the list)
    listed, na = torch_api._names(), torch_api._names("torch_names_not_applicable.txt")
    for space, names in na.items():
        assert set(names) <= set(listed[space]), set(names) - set(listed[space])
        provided = [n for n in names if torch_api._has(space, n)]
        assert not provided, f"{space}: {provided} now exist; take them off the list"
    report = torch_api_coverage()
    assert "cudnn_convolution" in report["torch"]["not_applicable"]
    assert "cudnn_convolution" not in report["torch"]["missing"]


def test_torch_api_coverage_counts_the_checked_in_names(monkeypatch):
    # a name fnx lacks is listed: take one away
    monkeypatch.delattr(fnx.special, "chebyshev_polynomial_t")
    report = torch_api_coverage()
    assert set(report) == {"torch", "torch.Tensor", "torch.nn.functional", "torch.linalg",
                           "torch.fft", "torch.special"}
    for r in report.values():
        assert r["provided"] + len(r["missing"]) + len(r["not_applicable"]) == r["total"] > 0
    # names fnx has are counted; a name it lacks is listed
    for space, name in (("torch", "matmul"), ("torch", "compile"), ("torch.linalg", "solve"),
                        ("torch.Tensor", "add_"), ("torch.fft", "rfft")):
        assert name not in report[space]["missing"]
    assert hasattr(fnx, "matmul") and not hasattr(fnx.special, "chebyshev_polynomial_t")
    assert "chebyshev_polynomial_t" in report["torch.special"]["missing"]
