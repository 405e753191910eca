"""``python -m fnx.coverage``: the op-by-level coverage table, read from the registry.

One row per operator overload (``fnx.dispatch.dispatcher.all_ops()``) with its schema, level
(prim/core/aten) and what exists for it: a meta function, a CPU kernel, a decomposition to
core and to prims (found by running the op's first OpInfo sample, first dtype, through
``fnx.graph.decompose.run_decomposed`` and checking which ops ran and that the result matches
eager), lowering targets that handle it (``fnx.lower.targets()``, each answering
``has_rule(op)``; an op that is not a prim lowers when every prim it decomposes to has a
rule), autograd (a derivative formula, an Autograd kernel, or differentiation through a
composite decomposition), its autocast policy per device type (``fnx.ir.autocast_policy``;
blank: the op runs in its inputs' dtypes under autocast) and its OpInfo sample count.
Nothing is hand-maintained except ``NOT_APPLICABLE``: Core ATen overloads that mean nothing
for fnx, with the reason.

>>> rows = coverage_rows(run=False)
>>> add = next(r for r in rows if r["op"] == "add.Tensor")
>>> add["level"], add["meta"], add["cpu"]
('core', 'yes', 'kernel')
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings

from .. import testing
from .torch_api import render_torch_api, torch_api_coverage
from ..core.dispatch_key import AUTOGRAD_KEYS, AliasKey, DispatchKey
from ..dispatch.dispatcher import _ops, all_ops
from ..graph.decompose import level as _op_level
from ..graph.decompose import run_decomposed
from ..ir.autocast_policy import POLICY as AUTOCAST_POLICY
from ..ir.registry import NONDIFFERENTIABLE
from ..testing.checks import check_decomposition, lowering_targets
from ._core_ops import CORE_ATEN_SCHEMAS

__all__ = ["NOT_APPLICABLE", "coverage_rows", "summarize", "core_overloads", "missing_core",
           "render", "main", "level_of"]

#: Core ATen overloads fnx does not define, and why (the only hand-written data here).
NOT_APPLICABLE = {
    "aten::sym_size.int": "symbolic-shape query; fnx shapes are concrete ints (Tensor.size)",
    "aten::sym_stride.int": "symbolic-shape query; fnx strides are concrete (Tensor.stride)",
    "aten::sym_numel": "symbolic-shape query; fnx sizes are concrete ints (Tensor.numel)",
    "aten::sym_storage_offset": "symbolic-shape query; fnx has no storage offsets to trace",
}

LEVELS = ("prim", "core", "aten")
COLUMNS = ("op", "schema", "level", "meta", "cpu", "to_core", "to_prims", "lowering",
           "autograd", "autocast", "samples")
HEADERS = {"op": "op", "schema": "schema", "level": "level", "meta": "meta",
           "cpu": "CPU kernel", "to_core": "to core", "to_prims": "to prims",
           "lowering": "lowering", "autograd": "autograd", "autocast": "autocast",
           "samples": "OpInfo samples"}


def level_of(op) -> str:
    """The op's level as the table names it: ``prim``, ``core`` or ``aten``."""
    name = _op_level(op)
    return "prim" if name == "prims" else name


def _display_name(op) -> str:
    base = op.qualname.split("::", 1)[1]
    if "." not in base:
        base += ".default"
    return base if op.namespace == "aten" else f"{op.namespace}.{base}"


def core_overloads() -> dict:
    """``{"aten::add.Tensor": schema}`` of the Core ATen opset (``.default`` dropped)."""
    out = {}
    for s in CORE_ATEN_SCHEMAS:
        name = s.split("(", 1)[0]
        out[name.replace(".default", "")] = s
    return out


def missing_core() -> list:
    """Core ATen overloads fnx does not define (the not-applicable ones excluded)."""
    return sorted(n for n in core_overloads() if n not in _ops and n not in NOT_APPLICABLE)


# --------------------------------------------------------------------------- columns

def _meta(op) -> str:
    if op.meta is not None or DispatchKey.Meta in op.kernels:
        return "yes"
    if AliasKey.CompositeImplicitAutograd in op.kernels:
        return "via decomposition"
    return ""


def _cpu(op) -> str:
    if DispatchKey.CPU in op.kernels:
        return "kernel"
    if AliasKey.CompositeExplicitAutograd in op.kernels:
        return "composite (explicit)"
    if AliasKey.CompositeImplicitAutograd in op.kernels:
        return "composite"
    return ""


def _autograd(op) -> str:
    """How autograd handles the op: its formula, its functional twin's formula (in-place),
    not differentiable, through its decomposition, or (blank) a backward-time error."""
    d = getattr(op, "derivative", None)
    if d is NONDIFFERENTIABLE:
        return "n/a"
    if d is not None:
        return "formula"
    if AliasKey.Autograd in op.kernels or any(k in op.kernels for k in AUTOGRAD_KEYS):
        return "formula (functional)" if op.schema.is_mutable else "kernel"
    if op.decomposition is not None:
        return "via decomposition"
    return ""


_AUTOCAST_WORDS = {"lower_precision_fp": "lower", "fp32": "fp32",
                   "fp32_set_opt_dtype": "fp32 (dtype=)", "fp32_append_dtype": "fp32 (dtype=)",
                   "promote": "promote", "banned": "banned"}


def _autocast(op) -> str:
    """The op's autocast policy per device type: ``cpu lower; cuda lower`` (``lower``: runs
    in the autocast dtype; ``fp32``: in float32; ``promote``: in the widest input type)."""
    return "; ".join(f"{device} {_AUTOCAST_WORDS[table[op.qualname]]}"
                     for device, table in AUTOCAST_POLICY.items() if op.qualname in table)


def _targets():
    return lowering_targets()


def _decomposes(info, to):
    """``("ok", ops that ran)`` or ``("FAIL: ...", None)`` for the first sample, first dtype."""
    samples = info.sample_inputs("cpu", info.dtypes[0]) if info.dtypes else []
    if not samples:
        return "no samples", None
    s = samples[0]
    try:
        check_decomposition(info, s, to)
    except AssertionError as e:
        msg = str(e)
        return "FAIL: " + (msg.split(": ", 1)[-1] if "ran:" not in msg else
                           "left " + msg.split("ran: ", 1)[1]), None
    except Exception as e:      # the decomposition itself raised
        return f"FAIL: {type(e).__name__}: {e}", None
    _, ran = run_decomposed(info.op, *info.sample_inputs("cpu", info.dtypes[0])[0].all_args(),
                            to=to, **s.kwargs)
    return "ok", set(ran)


def _status(op, info, to, run):
    """(column text, ops that ran or None) of one entry for decomposing to ``to``."""
    if info is None:
        return "no samples" + (" (has decomposition)" if op.decomposition else ""), None
    if f"decomp_{to}" in info.skips:
        return "n/a: " + info.skips[f"decomp_{to}"], None
    if f"decomp_{to}" not in info.applicable_checks():
        return "no decomposition", None
    if not run:
        return "not run", None
    return _decomposes(info, to)


def _row(op, infos, targets, run):
    """The row of ``op``; ``infos``: its entries (an op may have several, e.g. one per
    indexing mode): samples add up, and a decomposition is "ok" when it is for all."""
    level = level_of(op)
    row = {"op": _display_name(op), "schema": str(op.schema), "level": level,
           "meta": _meta(op), "cpu": _cpu(op), "autograd": _autograd(op),
           "autocast": _autocast(op),
           "samples": sum(len(i.sample_inputs("cpu", i.dtypes[0])) for i in infos
                          if i.dtypes),
           "to_core": "", "to_prims": "", "lowering": ""}
    reached = None
    for to, col in (("core", "to_core"), ("prims", "to_prims")):
        if level == "prim" or (level == "core" and to == "core"):
            row[col] = level
            continue
        results = [_status(op, i, to, run) for i in (infos or [None])]
        fails = [r for r in results if r[0].startswith("FAIL")]
        oks = [r for r in results if r[0] == "ok"]
        row[col] = (fails or oks or results)[0][0]
        if to == "prims" and oks and not fails:
            reached = set().union(*(r[1] for r in oks))
    lowers = []
    for name, target in sorted(targets.items()):
        if target.has_rule(op) or (reached and all(target.has_rule(o) for o in reached)):
            lowers.append(name)
    row["lowering"] = ", ".join(lowers)
    return row


def coverage_rows(run=True, level=None) -> list:
    """One dict per op overload (see ``COLUMNS``), prims first, then core, then aten.
    ``run=False`` skips running samples through the decomposer."""
    if level == "prims":
        level = "prim"
    by_op = {}
    for info in testing.entries():
        by_op.setdefault(info.op, []).append(info)
    targets = _targets()
    rows = []
    for op in all_ops():
        if level is not None and level_of(op) != level:
            continue
        rows.append(_row(op, by_op.get(op, []), targets, run))
    if level in (None, "core"):
        core = core_overloads()
        for name, reason in NOT_APPLICABLE.items():
            base = name.split("::", 1)[1]
            rows.append({"op": base if "." in base else base + ".default",
                         "schema": core.get(name, name).split("::", 1)[-1], "level": "core",
                         **{c: "n/a" for c in COLUMNS[3:-1]}, "samples": 0,
                         "not_applicable": reason})
    rows.sort(key=lambda r: (LEVELS.index(r["level"]), r["op"]))
    return rows


def summarize(rows) -> dict:
    """Counts per column."""
    n = len(rows)
    per_level = {lv: sum(r["level"] == lv for r in rows) for lv in LEVELS}
    ok = {}
    for col in ("to_core", "to_prims"):
        need = [r for r in rows if r[col] not in ("prim", "core", "n/a")]
        ok[col] = (sum(r[col] == "ok" for r in need), len(need))
    lowering = {}
    for r in rows:
        for t in filter(None, (x.strip() for x in r["lowering"].split(",")
                               if r["lowering"] != "n/a")):
            lowering[t] = lowering.get(t, 0) + 1
    return {
        "ops": n, "levels": per_level,
        "meta": sum(r["meta"] not in ("", "n/a") for r in rows),
        "cpu": sum(r["cpu"] not in ("", "n/a") for r in rows),
        "to_core_ok": ok["to_core"][0], "to_core_needed": ok["to_core"][1],
        "to_prims_ok": ok["to_prims"][0], "to_prims_needed": ok["to_prims"][1],
        "lowering": lowering,
        "autograd": sum(r["autograd"] not in ("", "n/a") for r in rows),
        "opinfo": sum(r["samples"] > 0 for r in rows),
        "autocast": sum(r["autocast"] not in ("", "n/a") for r in rows),
        "missing_core": missing_core(),
        "not_applicable": dict(NOT_APPLICABLE),
    }


def _summary_line(s) -> str:
    lv = ", ".join(f"{s['levels'][k]} {k}" for k in LEVELS)
    low = ", ".join(f"{k} {v}" for k, v in sorted(s["lowering"].items())) or "none"
    return (f"{s['ops']} ops ({lv}) | meta {s['meta']} | CPU {s['cpu']} | to core "
            f"{s['to_core_ok']}/{s['to_core_needed']} | to prims "
            f"{s['to_prims_ok']}/{s['to_prims_needed']} | lowering: {low} | autograd "
            f"{s['autograd']} | autocast policy {s['autocast']} | OpInfo "
            f"{s['opinfo']}/{s['ops']}")


def _cell(v, width=None):
    v = str(v)
    if width is not None and len(v) > width:
        v = v[:width - 1] + "…"
    return v


def render(rows, fmt="table") -> str:
    s = summarize(rows)
    if fmt == "json":
        return json.dumps({"rows": rows, "summary": s}, indent=1)
    tail = [_summary_line(s)]
    tail.append("Core ATen overloads missing: " +
                (", ".join(s["missing_core"]) or "none") + f" ({len(s['missing_core'])})")
    tail.append("Not applicable: " + "; ".join(f"{k} ({v})" for k, v in
                                                NOT_APPLICABLE.items()))
    if fmt == "markdown":
        head = "| " + " | ".join(HEADERS[c] for c in COLUMNS) + " |"
        sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
        body = ["| " + " | ".join(_cell(r[c]).replace("|", "\\|") if c != "schema" else
                                  f"`{r[c]}`".replace("|", "\\|") for c in COLUMNS) + " |"
                for r in rows]
        return "\n".join([head, sep] + body + [""] + [f"**{tail[0]}**", ""] +
                         [f"- {t}" for t in tail[1:]])
    if fmt != "table":
        raise ValueError(f"unknown format {fmt!r}: table, markdown or json")
    widths = {"schema": 60, "to_core": 28, "to_prims": 28}
    cells = [[_cell(r[c], widths.get(c)) for c in COLUMNS] for r in rows]
    head = [HEADERS[c] for c in COLUMNS]
    w = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w[i]) for i, h in enumerate(head)),
             "  ".join("-" * x for x in w)]
    lines += ["  ".join(c.ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in cells]
    return "\n".join(lines + [""] + tail)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fnx.coverage",
                                description="Op coverage by level, read from the registry.")
    p.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    p.add_argument("--level", choices=("aten", "core", "prim", "prims"), default=None)
    p.add_argument("--no-run", action="store_true",
                   help="do not run OpInfo samples through the decomposer")
    p.add_argument("--torch-api", action="store_true",
                   help="instead: how many of PyTorch's public names fnx provides, and which "
                        "are missing (fnx/testing/torch_names.txt)")
    args = p.parse_args(argv)
    if args.torch_api:
        sys.stdout.write(render_torch_api(torch_api_coverage()) + "\n")
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = coverage_rows(run=not args.no_run, level=args.level)
    sys.stdout.write(render(rows, args.format) + "\n")
    return 0
