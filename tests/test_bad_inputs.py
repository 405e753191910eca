"""Bad input raises what eager raises, on every path, and leaves every tensor unchanged.

Each case runs eagerly and through ``fnx.compile`` (after a good call, so the cached
program is what refuses the bad one), on the cpu and, where one exists (a GPU, or
``FNX_CUDA_ON_CPU=1`` as CI runs this file), the cuda device. The expected exception type
and message are PyTorch's; the inputs are compared byte for byte after the failed call.
Out-of-range values are data, so the compiled program and the cuda backend check them
inside the program (``prims.check_in_range``) and raise after it, before any write.
"""
from __future__ import annotations

import re
import warnings

import jax
import numpy as np
import pytest

import fnx
import fnx.nn.functional as F
from fnx.lower.jax_compile import range_status

DEVICES = ["cpu"] + (["cuda"] if fnx.cuda.is_available() else [])


def _setitem(a, i):
    a[i] = 5.0
    return a


def _scatter_(a, i, s):
    return a.scatter_(0, i, s)


def _masked_scatter_(a, m, s):
    return a.masked_scatter_(m, s)


def _index_put_acc(a, i, v):
    return a.index_put_((i,), v, accumulate=True)


def _index_add_(a, i, s):
    return a.index_add_(0, i, s)


def _index_copy_(a, i, s):
    return a.index_copy_(0, i, s)


def _put_acc_(a, i, s):
    return a.put_(i, s, accumulate=True)


def _int_add_(a):
    return a.add_(1.5)


def _expand_add_(a):
    a.expand(3, 3).add_(1)
    return a


def _t_view(a):
    return a.t().view(-1)


# (name, function, good inputs, bad inputs, exception, message): inputs as (kind, value)
# pairs made on each device: "f" float32, "i" int64, "b" bool
CASES = [
    ("index", lambda x, i: x[i], [("f", [1., 2., 3.]), ("i", [2])],
     [("f", [1., 2., 3.]), ("i", [0, 5])], IndexError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    ("index negative", lambda x, i: x[i], [("f", [1., 2., 3.]), ("i", [-3])],
     [("f", [1., 2., 3.]), ("i", [-4])], IndexError,
     "index -4 is out of bounds for dimension 0 with size 3"),
    ("index 2-d", lambda x, i, j: x[i, j], [("f", [[1., 2.], [3., 4.]]), ("i", [1]), ("i", [0])],
     [("f", [[1., 2.], [3., 4.]]), ("i", [1]), ("i", [2])], IndexError,
     "index 2 is out of bounds for dimension 1 with size 2"),
    ("setitem", _setitem, [("f", [0., 0., 0.]), ("i", [0, 2])],
     [("f", [0., 0., 0.]), ("i", [0, 9])], IndexError,
     "index 9 is out of bounds for dimension 0 with size 3"),
    ("index_put_ accumulate", _index_put_acc, [("f", [0., 0., 0.]), ("i", [1]), ("f", [2.])],
     [("f", [0., 0., 0.]), ("i", [3]), ("f", [2.])], IndexError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("gather", lambda x, i: x.gather(1, i), [("f", [[1., 2.], [3., 4.]]), ("i", [[1], [0]])],
     [("f", [[1., 2.], [3., 4.]]), ("i", [[1], [2]])], RuntimeError,
     "index 2 is out of bounds for dimension 1 with size 2"),
    ("index_select", lambda x, i: x.index_select(0, i), [("f", [1., 2.]), ("i", [1, 0])],
     [("f", [1., 2.]), ("i", [1, 2])], IndexError, "index out of range in self"),
    ("embedding", lambda w, i: F.embedding(i, w), [("f", [[1., 2.], [3., 4.]]), ("i", [1])],
     [("f", [[1., 2.], [3., 4.]]), ("i", [-1])], IndexError, "index out of range in self"),
    ("scatter_", _scatter_, [("f", [0., 0., 0.]), ("i", [2, 0]), ("f", [1., 2.])],
     [("f", [0., 0., 0.]), ("i", [0, 3]), ("f", [1., 2.])], RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("scatter_add", lambda a, i, s: a.scatter_add(0, i, s),
     [("f", [0., 0.]), ("i", [1]), ("f", [1.])], [("f", [0., 0.]), ("i", [-1]), ("f", [1.])],
     RuntimeError, "index -1 is out of bounds for dimension 0 with size 2"),
    ("masked_scatter_", _masked_scatter_,
     [("f", [0., 0., 0.]), ("b", [True, False, True]), ("f", [1., 2.])],
     [("f", [0., 0., 0.]), ("b", [True, True, True]), ("f", [1., 2.])], RuntimeError,
     "Number of elements of source < number of ones in mask"),
    ("cross_entropy", lambda x, t: F.cross_entropy(x, t),
     [("f", [[1., 2., 0.], [0., 1., 2.]]), ("i", [2, 0])],
     [("f", [[1., 2., 0.], [0., 1., 2.]]), ("i", [0, 3])], IndexError,
     "Target 3 is out of bounds."),
    ("nll_loss", lambda x, t: F.nll_loss(x, t),
     [("f", [[-1., -2.], [-1., -0.5]]), ("i", [1, 0])],
     [("f", [[-1., -2.], [-1., -0.5]]), ("i", [-2, 0])], IndexError,
     "Target -2 is out of bounds."),
    ("index_add_", _index_add_, [("f", [0., 0., 0.]), ("i", [2, 2]), ("f", [1., 2.])],
     [("f", [0., 0., 0.]), ("i", [0, 3]), ("f", [1., 2.])], RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("index_add negative", lambda a, i, s: a.index_add(0, i, s),
     [("f", [0., 0.]), ("i", [1]), ("f", [1.])], [("f", [0., 0.]), ("i", [-1]), ("f", [1.])],
     RuntimeError, "index -1 is out of bounds for dimension 0 with size 2"),
    ("index_copy_", _index_copy_, [("f", [0., 0., 0.]), ("i", [2, 0]), ("f", [1., 2.])],
     [("f", [0., 0., 0.]), ("i", [1, 3]), ("f", [1., 2.])], IndexError,
     "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"),
    ("take", lambda x, i: fnx.take(x, i), [("f", [[1., 2.], [3., 4.]]), ("i", [3, -4])],
     [("f", [[1., 2.], [3., 4.]]), ("i", [0, -5])], IndexError,
     "out of range: tried to access index -5 on a tensor of 4 elements."),
    ("put_ accumulate", _put_acc_, [("f", [0., 0., 0.]), ("i", [-1, 2]), ("f", [1., 2.])],
     [("f", [0., 0., 0.]), ("i", [0, 3]), ("f", [1., 2.])], IndexError,
     "out of range: tried to access index 3 on a tensor of 3 elements."),
    ("binary_cross_entropy", lambda p, t: F.binary_cross_entropy(p, t),
     [("f", [0.25, 1.]), ("f", [0., 1.])], [("f", [0.25, 1.5]), ("f", [0., 1.])], RuntimeError,
     "all elements of input should be between 0 and 1"),
    ("multinomial negative", lambda p: fnx.multinomial(p, 1), [("f", [[0.5, 0.5]])],
     [("f", [[0.5, -0.5]])], RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("multinomial zero row", lambda p: fnx.multinomial(p, 2, replacement=True),
     [("f", [[0.5, 0.5], [1., 0.]])], [("f", [[0.5, 0.5], [0., 0.]])], RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("bernoulli", lambda p: fnx.bernoulli(p), [("f", [0.25, 1.])], [("f", [0.25, 1.5])],
     RuntimeError, "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    ("poisson negative rate", lambda r: fnx.poisson(r), [("f", [0., 2.])], [("f", [1., -1.])],
     RuntimeError, "invalid Poisson rate, expected rate to be non-negative"),
    ("int add_ float", _int_add_, [("i", [1, 2])], [("i", [1, 2])], RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    ("view of a transpose", _t_view, [("f", [[1., 2.]])], [("f", [[1., 2.], [3., 4.]])],
     RuntimeError, "view size is not compatible with input tensor's size and stride"),
    ("write through expand", _expand_add_, [("f", [[1.]])], [("f", [[1., 2., 3.]])],
     RuntimeError, "more than one element of the written-to tensor refers to a single "
                   "memory location"),
]

_DTYPES = {"f": fnx.float32, "i": fnx.int64, "b": fnx.bool}


def _make(spec, device):
    return [fnx.tensor(v, dtype=_DTYPES[k], device=device) for k, v in spec]


def _bytes(ts):
    return [(t.dtype, tuple(t.shape), t.detach().cpu().numpy().tobytes()) for t in ts]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_and_changes_nothing(case, mode, device):
    name, fn, good, bad, exc, message = case
    f = fn
    if mode == "compiled":
        f = fnx.compile(fn, fullgraph=True)
        if name not in ("int add_ float", "view of a transpose", "write through expand"):
            f(*_make(good, device))       # the cached program must refuse the bad call
    args = _make(bad, device)
    before = _bytes(args)
    with pytest.raises(exc, match=re.escape(message)):
        f(*args)
    assert _bytes(args) == before


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_training_step_with_a_bad_target_changes_nothing(device):
    fnx.manual_seed(0)
    emb = fnx.nn.Embedding(5, 3).to(device)
    opt = fnx.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)

    @fnx.compile
    def step(i, t):
        opt.zero_grad()
        loss = F.cross_entropy(emb(i), t)
        loss.backward()
        opt.step()
        return loss

    T = lambda v: fnx.tensor(v, device=device)   # noqa: E731
    step(T([0, 4]), T([0, 2]))
    step(T([1, 3]), T([2, 1]))
    weights = _bytes([emb.weight, emb.weight.grad])
    momentum = _bytes([opt.state[emb.weight]["momentum_buffer"]])
    for i, t, message in (([0, 5], [0, 1], "index out of range in self"),
                          ([0, 1], [0, 3], "Target 3 is out of bounds.")):
        with pytest.raises(IndexError, match=re.escape(message)):
            step(T(i), T(t))
        assert _bytes([emb.weight, emb.weight.grad]) == weights
        assert _bytes([opt.state[emb.weight]["momentum_buffer"]]) == momentum
    # and the program still runs good steps: the same update as eager from here
    w = emb.weight.detach().cpu().numpy().copy()
    g_expected = emb.weight.grad.cpu().numpy().copy()
    step(T([2, 2]), T([0, 0]))
    assert not np.array_equal(emb.weight.detach().cpu().numpy(), w)
    assert not np.array_equal(emb.weight.grad.cpu().numpy(), g_expected)


def test_value_checks_can_be_turned_off():
    """``options={"value_checks": False}``: no check program runs; an out-of-range index
    then reads an unspecified element (as in jax.numpy), without an error."""
    f = fnx.compile(lambda x, i: x[i] * 2, options={"value_checks": False})
    out = f(fnx.tensor([1., 2., 3.]), fnx.tensor([7]))
    assert out.shape == (1,)
    on = fnx.compile(lambda x, i: x[i] * 2)
    with pytest.raises(IndexError):
        on(fnx.tensor([1., 2., 3.]), fnx.tensor([7]))
    with pytest.raises(RuntimeError, match="Unexpected type of attr value_checks"):
        fnx.compile(lambda x: x, options={"value_checks": "no"})


def test_a_program_with_no_value_checks_has_no_check_program():
    f = fnx.compile(lambda x: (x * 2).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(fnx.ones(3))
    (entry,) = f.entries()
    assert all(p.checker is None for p in entry.programs())
    g = fnx.compile(lambda x, i: x[i])
    g(fnx.ones(3), fnx.tensor([1]))
    (entry,) = g.entries()
    assert [p.checks for p in entry.programs()] == [
        [("IndexError", "index {} is out of bounds for dimension 0 with size 3")]]


def test_a_value_check_on_a_host_constant_is_computed_in_the_program():
    # a check whose operand is a constant of the program (a NumPy array, as a batch of
    # upsampling samples gave) once failed to trace: a traced index subscripted NumPy
    status = jax.jit(lambda k: range_status(np.array([0, 5, 7]), 0, 3) + k)(0)
    assert status.tolist() == [1, 5, 1]         # failed, the first bad value, its index
