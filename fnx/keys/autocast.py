"""The Autocast keys' kernels: cast an op's inputs by its policy, then run it below.

One kernel per (op, device type) named in the cast policy (``fnx.ir.autocast_policy``);
every other op falls through the Autocast keys (``fnx.dispatch.defaults``). A kernel
turns its own key off on this thread, casts the eligible arguments (floating-point,
not float64, on its device type) with ``aten._to_copy`` and calls the op again: the
casts and the op go through Autograd (which records them) and, under ``fnx.compile``,
the Tracer (which records them in the graph), and ops the op decomposes into are not
cast a second time. Autocast is on when the key is in the thread-local include set
(``fnx.core.autocast_mode``).

Weights are cast once per region: the lower-precision cast of a float32 leaf that
requires grad is cached until the outermost region exits, and made again when the
weight was written since (its version changed) or grad mode differs. No cache while a
trace is recording: a cast made there is a graph value, not a tensor.
"""
from __future__ import annotations

import weakref

from ..core import dtype as D
from ..core import tls
from ..core.autocast_mode import _KEY, get_autocast_dtype
from ..core.dispatch_key import AUTOGRAD_BITS
from ..dispatch.dispatcher import all_ops, get_op
from ..ir.autocast_policy import BANNED_MESSAGES, POLICY

__all__ = ["register_all", "cast_for"]

_to_copy = get_op("aten::_to_copy")


def _eligible(t, device_type) -> bool:
    return (t._device.type == device_type and t._dtype.is_floating_point
            and t._dtype is not D.float64)


def _recording(st) -> bool:
    return any(m.records_graph for m in st.modes)


def cast_for(t, dtype, device_type):
    """``t`` cast to ``dtype`` when autocast on ``device_type`` casts it; else ``t``."""
    if not hasattr(t, "_ks") or t._dtype is dtype or not _eligible(t, device_type):
        return t
    st = tls.state
    if (t._dtype is D.float32 and st.autocast_cache_enabled and not _recording(st)
            and t.requires_grad and t.grad_fn is None and t._base is None
            and dtype is get_autocast_dtype(device_type)):
        grad = st.mask & AUTOGRAD_BITS == AUTOGRAD_BITS
        hit = st.autocast_cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1] == t._version and hit[2] == grad:
            return hit[3]
        out = _to_copy(t, dtype=dtype)
        st.autocast_cache[id(t)] = (weakref.ref(t), t._version, grad, out)
        return out
    return _to_copy(t, dtype=dtype)


def _map(fn, args, kwargs):
    def one(a):
        if isinstance(a, (list, tuple)) and a and any(hasattr(x, "_ks") for x in a):
            return type(a)(fn(x) if x is not None else None for x in a)
        return fn(a) if a is not None else None
    return [one(a) for a in args], {k: one(v) for k, v in kwargs.items()}


def _tensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        if hasattr(a, "_ks"):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if hasattr(x, "_ks"))


def _first_tensor(args, kwargs):
    return next(_tensors(args, kwargs), None)


def _promote_type(op, device_type, args, kwargs):
    """The widest floating type among the eligible inputs, as ATen's ``promote_type``:
    float32 wins over the lower-precision type; float64 inputs are left out."""
    lower = get_autocast_dtype(device_type)
    current = lower
    for t in _tensors(args, kwargs):
        if not _eligible(t, device_type):
            continue
        if t._dtype is D.float32:
            current = D.float32
        elif t._dtype is not lower:
            raise RuntimeError(f"{op.qualname}: unexpected floating ScalarType {t._dtype} in "
                               f"autocast (the autocast dtype is {lower})")
    return current


def _kernel(op, device_type, policy):
    bit = 1 << _KEY[device_type]
    dtype_pos = None
    if policy == "fp32_set_opt_dtype":
        positional = [a for a in op.schema.arguments if not a.kwarg_only]
        names = [a.name for a in positional]
        dtype_pos = names.index("dtype") if "dtype" in names else "dtype"

    def prepare(args, kwargs):
        if policy == "lower_precision_fp":
            to = get_autocast_dtype(device_type)
            return _map(lambda t: cast_for(t, to, device_type), args, kwargs)
        if policy == "fp32":
            return _map(lambda t: cast_for(t, D.float32, device_type), args, kwargs)
        if policy == "promote":
            to = _promote_type(op, device_type, args, kwargs)
            return _map(lambda t: cast_for(t, to, device_type), args, kwargs)
        first = _first_tensor(args, kwargs)
        eligible = first is not None and _eligible(first, device_type)
        if policy == "fp32_append_dtype":
            # fnx's norm has no dtype overload: computing on the float32 cast of the input
            # is what norm(..., dtype=float32) does
            if eligible:
                args = [cast_for(args[0], D.float32, device_type), *args[1:]]
            return list(args), kwargs
        # fp32_set_opt_dtype: respect a dtype the caller gave, else compute in float32
        args = list(args)
        if eligible:
            if isinstance(dtype_pos, int):
                if args[dtype_pos] is None:
                    args[dtype_pos] = D.float32
            elif kwargs.get("dtype") is None:
                kwargs = {**kwargs, "dtype": D.float32}
        return args, kwargs

    if policy == "banned":
        message = BANNED_MESSAGES[op.qualname]

        def banned(ks, *args, **kwargs):
            raise RuntimeError(message)
        return banned

    def kernel(ks, *args, **kwargs):
        st = tls.state
        saved = st.include
        st.include = saved & ~bit
        try:
            args, kwargs = prepare(args, kwargs)
            return op(*args, **kwargs)
        finally:
            st.include = saved
    return kernel


def register_all() -> None:
    """Register the kernels of every defined op the policy names, per device type (ops
    defined later are registered when ``register_all`` runs again)."""
    for op in all_ops():
        for device_type, table in POLICY.items():
            policy = table.get(op.qualname)
            if policy is not None:
                op.register(_KEY[device_type], _kernel(op, device_type, policy))
