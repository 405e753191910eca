"""Bad input raises under fnx.compile what it raises eagerly, and writes nothing."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import fnx
from fnx.testing import to_numpy

CASES = {
    "int add_ float scalar": lambda t: t.add_(1.5),
    "int mul_ float tensor": lambda t: t.mul_(fnx.tensor([0.5, 1.0])),
    "int div_ (true division)": lambda t: t.div_(2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_place_result_that_cannot_be_cast_raises_and_writes_nothing(name):
    fn = CASES[name]
    eager_t, t = fnx.tensor([[1, 2], [3, 4]]), fnx.tensor([[1, 2], [3, 4]])
    with pytest.raises(RuntimeError) as eager:
        fn(eager_t)
    with pytest.raises(RuntimeError) as compiled:
        fnx.compile(fn)(t)
    assert str(compiled.value) == str(eager.value)
    assert "can't be cast to the desired output type Long" in str(eager.value)
    np.testing.assert_array_equal(to_numpy(t), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(to_numpy(eager_t), [[1, 2], [3, 4]])


@pytest.mark.parametrize("op", ["add_", "mul_", "copy_"])
def test_in_place_result_broadcast_bigger_than_its_tensor_raises_as_eager(op):
    # (the trace expanded small results into the written tensor, and refused a bigger one
    # with expand()'s message instead of the in-place op's)
    def fn(a, b):
        return getattr(a, op)(b)
    a, b = fnx.ones(3), fnx.full((2, 3), 2.0)
    with pytest.raises(RuntimeError) as eager:
        fn(a, b)
    with pytest.raises(RuntimeError) as compiled:
        fnx.compile(fn)(a, b)
    assert str(compiled.value) == str(eager.value)
    assert "output with shape [3] doesn't match the broadcast shape [2, 3]" in \
        str(eager.value) or op == "copy_"
    np.testing.assert_array_equal(to_numpy(a), [1.0, 1.0, 1.0])
    c = fnx.zeros(2, 3)         # a smaller operand still broadcasts into it
    fnx.compile(fn)(c, fnx.tensor([1.0, 2.0, 3.0]))
    want = {"add_": [1.0, 2.0, 3.0], "mul_": [0.0, 0.0, 0.0], "copy_": [1.0, 2.0, 3.0]}[op]
    np.testing.assert_array_equal(to_numpy(c), [want, want])


def test_tolist_is_a_data_dependent_point_like_item():
    """``x.tolist()`` in a compiled function is a graph break (its values go to Python),
    as ``item()`` is (``fullgraph=True``: the error naming the line)."""
    f = fnx.compile(lambda x: fnx.tensor(x.tolist()) * 2)
    np.testing.assert_array_equal(to_numpy(f(fnx.tensor([1.0, 2.0]))), [2.0, 4.0])
    np.testing.assert_array_equal(to_numpy(f(fnx.tensor([3.0, 2.0]))), [6.0, 4.0])
    strict = fnx.compile(lambda x: fnx.tensor(x.tolist()) * 2, fullgraph=True)
    with pytest.raises(RuntimeError, match=r"Tensor.tolist\(\) at"):
        strict(fnx.ones(2))


def test_a_named_tuple_argument_keeps_its_fields():
    pair = collections.namedtuple("pair", "a b")
    f = fnx.compile(lambda p: p.a * 2 + p.b)
    np.testing.assert_array_equal(to_numpy(f(pair(fnx.ones(2), fnx.tensor([1.0, 2.0])))),
                                  [3.0, 4.0])


def _bad_line_after_backward(compiled):
    """A training step whose bad input is met after backward() (a view that does not
    fit): the error, then the state the call left, then a good call."""
    fnx.manual_seed(0)
    m = fnx.nn.Linear(4, 3)
    opt = fnx.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    cache = {}

    def step(x, y, rows):
        opt.zero_grad()
        fnx.nn.functional.cross_entropy(m(x), y).backward()
        cache["h"] = m(x).detach()
        x.view(rows, 4)
        opt.step()
    f = fnx.compile(step) if compiled else step
    x, y = fnx.randn(5, 4), fnx.tensor([0, 1, 2, 1, 0])
    f(x, y, 5)
    with pytest.raises(RuntimeError) as error:
        f(x * 2, y, 3)
    left = [to_numpy(m.weight.detach()), to_numpy(m.weight.grad), to_numpy(cache["h"])]
    f(x, y, 5)
    return str(error.value), left, to_numpy(m.weight.detach()), f


def test_an_error_met_while_tracing_leaves_what_eager_leaves():
    # the trace's .grad and stored tensors stayed behind as meta tensors ("MetaArray"),
    # breaking every later use of the model
    (want_err, want_left, want_w, _), (err, left, w, f) = \
        _bad_line_after_backward(False), _bad_line_after_backward(True)
    assert err == want_err == "shape '[3, 4]' is invalid for input of size 20"
    for a, b in zip(left, want_left):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(w, want_w, rtol=1e-6)
    assert f._eager_reason is None          # bad input: later calls still compile


def test_a_function_only_the_trace_cannot_run_runs_eagerly_with_a_warning():
    def f(x):
        if fnx.compiler.is_compiling():
            raise TypeError("not under a trace")
        return x + 1
    g = fnx.compile(f)
    with pytest.warns(UserWarning, match=r"tracing .*\.f raised TypeError .*running it eagerly"):
        assert g(fnx.ones(2)).tolist() == [2.0, 2.0]
    assert g(fnx.zeros(2)).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="not under a trace"):
        fnx.compile(f, fullgraph=True)(fnx.ones(2))
