"""Test cases from the database: one case per (entry, dtype, check[, device]).

fnx's own suite (tests/test_opinfo.py) parametrizes over ``params()``.  A backend author
runs the same checks on their device from their own test file::

    # tests/test_mydev_ops.py
    import pytest
    import fnx.testing as ft
    import mydev                       # registers PrivateUse1 kernels, renames it "mydev"

    @pytest.fixture(scope="module", autouse=True)
    def backend():
        lib = mydev.register()
        yield
        lib._destroy()

    KNOWN = {"div.Tensor_mode": [ft.Known("reference", reason="no rounding modes yet")]}

    @pytest.mark.parametrize("case", ft.backend_params(
        "mydev", checks=("reference", "decomp_prims"), known=KNOWN))
    def test_mydev(case):
        case.run()

Samples are made on the CPU and moved to the device (``.to(device)``); results are
compared with the NumPy reference (``reference``) or with CPU eager (``decomp_*``: the
op decomposed, running the device's prims/core kernels).  A case whose op (or an op it
decomposes to) has no kernel for the device's key is skipped, naming the op, unless
``skip_unsupported=False``.
"""
from __future__ import annotations

import os

from ..core import dtype as D
from . import checks as C
from .database import CHECKS
from .opinfo import entries

__all__ = ["Case", "cases", "params", "backend_params", "run_check"]


class Case:
    """One test: ``check`` of ``info`` for samples of ``dtype`` on ``device``."""

    __slots__ = ("info", "dtype", "check", "device", "known", "target", "skip_unsupported",
                 "max_samples")

    def __init__(self, info, dtype, check, device="cpu", known=None, target=None,
                 skip_unsupported=False, max_samples=None):
        self.info = info
        self.dtype = dtype
        self.check = check
        self.device = device
        self.known = known
        self.target = target
        self.skip_unsupported = skip_unsupported
        self.max_samples = max_samples

    @property
    def id(self) -> str:
        parts = [self.info.name]
        if self.dtype is not None:
            parts.append(self.dtype.name)
        parts.append(self.check if self.target is None else f"{self.check}[{self.target}]")
        if self.device != "cpu":
            parts.append(str(self.device))
        return "-".join(parts)

    def run(self):
        try:
            run_check(self.info, self.dtype, self.check, self.device, self.target,
                      self.max_samples)
        except C.NotApplicable as e:
            import pytest  # noqa: PLC0415  (optional dependency)
            pytest.skip(str(e))
        except NotImplementedError as e:
            if self.skip_unsupported and "Could not run" in str(e):
                import pytest  # noqa: PLC0415  (optional dependency)
                pytest.skip(f"unsupported on {self.device}: {e}")
            raise

    def __repr__(self):
        return f"Case({self.id})"


def _device_type(device) -> str:
    return str(device).split(":")[0]


def _samples(info, dtype, device):
    if _device_type(device) in ("cpu",):
        return info.sample_inputs(device, dtype)
    return [C.to_device(s, device) for s in info.sample_inputs("cpu", dtype)]


def run_check(info, dtype, check, device="cpu", target=None, max_samples=None):
    """Run ``check`` over the samples of ``info`` for ``dtype`` (the first ``max_samples``
    of them, if given); one AssertionError lists the failing samples."""
    if check == "errors":
        errs = info.error_inputs("cpu")
        if _device_type(device) != "cpu":
            errs = [type(e)(C.to_device(e.sample, device), e.error_type, e.match, e.meta)
                    for e in errs]
        if not errs:
            raise AssertionError(f"{info.name}: no error inputs")
        failures = []
        for e in errs:
            try:
                C.check_errors(info, e)
            except AssertionError as exc:
                failures.append(str(exc))
        _report(info, "errors", failures, len(errs))
        return
    samples = _samples(info, dtype, device)[:max_samples]
    if not samples:
        raise AssertionError(f"{info.name}: no samples for {dtype}")
    if check == "lowering" and target not in (None, "interpreter"):
        # a compiling target: all samples in one program, compiled once
        C.check_lowering_batch(info, samples, target)
        return
    fn = {"reference": C.check_reference, "meta": C.check_meta,
          "decomp_core": lambda i, s: C.check_decomposition(i, s, "core"),
          "decomp_prims": lambda i, s: C.check_decomposition(i, s, "prims"),
          "lowering": lambda i, s: C.check_lowering(i, s, target),
          "grad": C.check_gradient}.get(check)
    if fn is None:
        raise ValueError(f"unknown check {check!r}; checks are {CHECKS}")
    failures = []
    not_applicable = []
    for s in samples:
        try:
            fn(info, s)
        except AssertionError as exc:
            failures.append(str(exc))
        except C.NotApplicable as exc:
            not_applicable.append(exc)
        except NotImplementedError:
            raise
        except Exception as exc:
            failures.append(f"{info.op.qualname} on {s!r}: raised {type(exc).__name__}: {exc}")
    if len(not_applicable) == len(samples):
        raise not_applicable[0]
    _report(info, check, failures, len(samples))


def _report(info, check, failures, n):
    if failures:
        shown = "\n  ".join(failures[:4])
        more = f"\n  ... and {len(failures) - 4} more" if len(failures) > 4 else ""
        raise AssertionError(f"{info.name} {check}: {len(failures)} of {n} samples failed:\n"
                             f"  {shown}{more}")


def _extra_known(known, info):
    if not known:
        return []
    return list(known.get(info.name, ()))


def cases(checks=None, *, device="cpu", ops=None, dtypes=None, known=None, targets=(),
          skip_unsupported=None, max_samples=None) -> list:
    """The cases for ``checks`` (default: every applicable one except lowering) of the
    entries named in ``ops`` (default: all; a name or a predicate on the entry), for their
    dtypes (intersected with ``dtypes``), on ``device``.  ``known``: extra ``{entry name:
    [Known, ...]}``.  ``targets``: lowering target names for the ``lowering`` check
    (functional entries only).  ``max_samples``: run only the first samples of each."""
    dev_type = _device_type(device)
    if dtypes is None and os.environ.get("FNX_OPINFO_DTYPES"):
        # e.g. FNX_OPINFO_DTYPES=float32,int64,bool: a quicker run over fewer dtypes
        dtypes = tuple(getattr(D, n.strip()) for n in
                       os.environ["FNX_OPINFO_DTYPES"].split(",") if n.strip())
    if skip_unsupported is None:
        skip_unsupported = dev_type != "cpu"
    wanted = None if ops is None or callable(ops) else set(ops)
    out = []
    for info in entries():
        if wanted is not None and info.name not in wanted:
            continue
        if callable(ops) and not ops(info):
            continue
        extra = _extra_known(known, info)
        applicable = info.applicable_checks()
        for check in (checks or [c for c in applicable if c != "lowering"]):
            if check not in applicable:
                continue
            if check == "meta" and dev_type != "cpu":
                continue        # shapes and dtypes do not depend on the device
            tgts = targets if check == "lowering" else (None,)
            if check == "errors":
                dts = (None,)
            elif check == "grad":       # finite differences need float64 (or upcast float32)
                # one real and one complex dtype (complex128, or complex64 upcast)
                dts = [next((d for d in (D.float64, D.float32) if d in info.dtypes), None)]
                dts = [d for d in dts if d is not None and (dtypes is None or d in dtypes or
                                                              D.float64 in dtypes)]
                cdt = next((d for d in (D.complex128, D.complex64) if d in info.dtypes), None)
                if cdt is not None and (dtypes is None or cdt in dtypes or
                                        D.complex128 in dtypes):
                    dts.append(cdt)
            else:
                dts = [d for d in info.dtypes if dtypes is None or d in dtypes]
            for target in tgts:
                for d in dts:
                    k = next((k for k in extra if k.matches(check, d, dev_type, target)),
                             None) or info.known(check, d, dev_type, target)
                    out.append(Case(info, d, check, device, k, target, skip_unsupported,
                                    max_samples))
    return out


def params(checks=None, **kwargs) -> list:
    """``cases(...)`` as ``pytest.param``s: known failures become strict xfails."""
    import pytest  # noqa: PLC0415  (optional: fnx.testing works without pytest)
    out = []
    for c in cases(checks, **kwargs):
        marks = ()
        if c.known is not None:
            marks = pytest.mark.xfail(strict=True, reason=c.known.reason)
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


def backend_params(device, checks=("reference", "decomp_prims", "errors"), **kwargs) -> list:
    """``params`` for a backend's device: the same checks, samples moved to ``device``."""
    return params(checks, device=device, **kwargs)

