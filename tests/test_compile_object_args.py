"""A compiled function's argument may be a plain object holding tensors (a torchtext
batch with ``.premise``/``.label``, a config): its tensor attributes are program inputs
read on every call and its other attributes are guarded, so a reassigned attribute is
seen, and a new object of the same layout reuses the program instead of recompiling."""
import logging

import numpy as np
import pytest

import fnx


class Batch:
    def __init__(self, x, k):
        self.x, self.k = x, k


def _reference(w, b, x, k):
    return float((x @ w.T + b).sum() * k)


def _model():
    fnx.manual_seed(0)
    lin = fnx.nn.Linear(3, 1)

    class M(fnx.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, batch):
            return self.lin(batch.x).sum() * batch.k

    m = M()
    return m, lin.weight.detach().numpy(), lin.bias.detach().numpy()


def test_attributes_are_read_on_every_call():
    m, w, b = _model()
    c = fnx.compile(m, dynamic=False)
    rng = np.random.default_rng(0)
    x1, x2 = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    batch = Batch(fnx.tensor(x1), 2)
    np.testing.assert_allclose(c(batch).item(), _reference(w, b, x1, 2), rtol=1e-5)
    batch.x = fnx.tensor(x2)                 # reassigned: the new tensor is read
    np.testing.assert_allclose(c(batch).item(), _reference(w, b, x2, 2), rtol=1e-5)
    batch.x[0, 0] = 7.0                      # updated in place: read too
    x2[0, 0] = 7.0
    np.testing.assert_allclose(c(batch).item(), _reference(w, b, x2, 2), rtol=1e-5)
    batch.k = 3                              # a non-tensor attribute is guarded
    np.testing.assert_allclose(c(batch).item(), _reference(w, b, x2, 3), rtol=1e-5)
    assert len(c.forward.entries()) == 2


def test_new_objects_of_one_layout_share_a_program():
    m, w, b = _model()
    c = fnx.compile(m, dynamic=False)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.standard_normal((4, 3)).astype(np.float32)
        np.testing.assert_allclose(c(Batch(fnx.tensor(x), 2)).item(),
                                   _reference(w, b, x, 2), rtol=1e-5)
    assert len(c.forward.entries()) == 1


def test_gradients_flow_through_object_attributes():
    m, w, b = _model()
    c = fnx.compile(m, dynamic=False)
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    xt = fnx.tensor(x, requires_grad=True)
    c(Batch(xt, 2)).backward()
    np.testing.assert_allclose(xt.grad.numpy(), np.broadcast_to(2 * w, (2, 3)), rtol=1e-6)
    np.testing.assert_allclose(m.lin.weight.grad.numpy(), 2 * x.sum(0, keepdims=True),
                               rtol=1e-5)


def test_keywords_and_dict_items_in_another_order_keep_their_names():
    # The same names in another order are the same call: each value must reach its own
    # name, never the position the first call's order gave it.
    t1, t2 = fnx.tensor([1.0]), fnx.tensor([5.0])
    f = fnx.compile(lambda a, b: a - b)
    assert f(a=t1, b=t2).item() == -4.0
    assert f(b=t2, a=t1).item() == -4.0
    g = fnx.compile(lambda d: d["a"] - d["b"] * 2)
    assert g({"a": t1, "b": t2}).item() == -9.0
    assert g({"b": t2, "a": t1}).item() == -9.0


def test_writes_to_a_passed_list_dict_or_object_reach_the_caller():
    # The trace wrote copies of the caller's containers (which held its tensors): the
    # append, the item and the attribute were lost on every call. Such a function runs
    # eagerly, so each call makes them as eager does.
    def collect(x, outs, metrics, batch):
        outs.append(x * 2)
        metrics["n"] = metrics.get("n", 0) + 1
        batch.out = x + batch.x
        return x.sum()

    g = fnx.compile(collect)
    for i in range(3):
        outs, metrics, batch = [], {"n": i}, Batch(fnx.ones(2), 1)
        if i == 0:
            with pytest.warns(UserWarning, match="changes a list, dict or object passed"):
                g(fnx.ones(2), outs, metrics, batch)
        else:
            g(fnx.ones(2), outs, metrics, batch)
        assert len(outs) == 1 and outs[0].tolist() == [2.0, 2.0]
        assert metrics == {"n": i + 1}
        assert batch.out.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="changes a list, dict or object passed"):
        fnx.compile(collect, fullgraph=True)(fnx.ones(2), [], {}, Batch(fnx.ones(2), 1))


def test_reading_passed_containers_still_compiles(traces):
    g = fnx.compile(lambda x, cfg, ws: x * cfg["scale"] + ws[0])
    for _ in range(3):
        assert g(fnx.ones(2), {"scale": 2.0}, [fnx.ones(2)]).tolist() == [3.0, 3.0]
    assert len(traces) == 1


def test_a_compile_warning_points_at_the_callers_line():
    g = fnx.compile(lambda x, outs: outs.append(x) or x)
    with pytest.warns(UserWarning, match="changes a list") as caught:
        g(fnx.ones(1), [])
    assert caught[0].filename == __file__


def test_a_dict_keyed_by_tensors_is_keyed_by_identity(caplog):
    # (an optimizer's ``state`` shape): comparing two key tensors elementwise raised
    # "Boolean value of Tensor ... is ambiguous" when the call changed
    t, u = fnx.ones(2), fnx.ones(2)
    f = fnx.compile(lambda x, d: x * sum(d.values()))
    with caplog.at_level(logging.INFO, logger="fnx.compile"):
        for n in (3, 4, 5, 6):      # (sizes that change: the symbolic trace's key too)
            assert f(fnx.ones(n), {t: 2.0}).tolist() == [2.0] * n
        assert f(fnx.ones(6), {u: 3.0}).tolist() == [3.0] * 6
    assert "keys are other objects (compared by identity)" in caplog.text


def test_a_numpy_argument_is_keyed_by_its_values():
    # keyed by id() before: the next array, allocated at the freed one's address, reused
    # the program that baked the first array's values in (and so did an in-place change)
    f = fnx.compile(lambda x, a: x * fnx.tensor(a))
    for k in range(3):
        a = np.full(3, float(k), np.float32)
        assert f(fnx.ones(3), a).tolist() == [float(k)] * 3
        del a
    big = np.zeros(1000, np.float32)
    assert f(fnx.ones(1000), big).sum().item() == 0.0
    big[7] = 5.0
    assert f(fnx.ones(1000), big).sum().item() == 5.0
