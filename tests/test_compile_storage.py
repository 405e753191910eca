"""Storage on the compiled path (ARCHITECTURE.md, "Storage"): a compiled step rebinds the
tensors it updates to its result arrays (resident storage, buffers donated) instead of
copying into them. Whatever shares a tensor's storage (views, ``.numpy()``, ``.data``)
still sees every update, autograd's version checks still fire, eager writes after a
compiled step copy first, and a donated buffer is never one that something else reads."""
import copy
import gc
import weakref

import jax
import numpy as np
import pytest

import fnx
from fnx import nn, optim
from fnx.core.tensor import resident
from fnx.lower.jax_compile import _copied_parameters
from fnx.lower.packed_grads import PackedGrad
from fnx.testing import models


def is_resident(t) -> bool:
    return resident(t) is not None


def peek(t) -> np.ndarray:
    """A copy of ``t``'s values that leaves its storage as it is (``.numpy()`` would give a
    resident tensor a private copy to share)."""
    return np.array(t.tolist(), dtype=t.dtype.numpy if hasattr(t.dtype, "numpy") else None)


def setup(seed=0, momentum=0.9):
    fnx.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
    return model, models.training_step(model, opt, nn.CrossEntropyLoss())


def batch(i=0):
    rng = np.random.default_rng(i)
    return (fnx.tensor(rng.standard_normal((5, 6)).astype(np.float32)),
            fnx.tensor(rng.integers(0, 3, 5)))


def assert_same_params(a, b):
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(peek(p), peek(q), rtol=1e-5, atol=1e-6)


def test_compiled_steps_equal_eager_steps_and_leave_parameters_resident():
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    for i in range(5):
        x, y = batch(i % 2)
        want, got = eager_step(x, y), step(x, y)
        np.testing.assert_allclose(peek(got), peek(want), rtol=1e-5)
        assert_same_params(model, eager_model)
        for p, q in zip(model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(peek(p.grad), peek(q.grad), rtol=1e-5, atol=1e-6)
    assert all(is_resident(p) for p in model.parameters())
    # this model's gradients are small: the step returns them packed in one array, each
    # .grad a slice made into a tensor of its own on first read (fnx.lower.packed_grads)
    step(*batch())
    assert all(isinstance(p._grad, PackedGrad) for p in model.parameters())
    assert isinstance(model[0].weight._grad.pack.array, jax.Array)


def test_rebind_bumps_the_version_like_an_in_place_update():
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    for _ in range(3):
        step(x, y)      # the first (tracing) call is not compared
        eager_step(x, y)
    before = [p._version for p in model.parameters()]
    eager_before = [p._version for p in eager_model.parameters()]
    step(x, y)
    eager_step(x, y)
    assert [p._version - v for p, v in zip(model.parameters(), before)] == \
        [p._version - v for p, v in zip(eager_model.parameters(), eager_before)]


def test_buffers_are_donated_and_updated_in_place():
    model, step = setup(momentum=0.0)
    step = fnx.compile(step)
    x, y = batch()
    for _ in range(3):
        step(x, y)
    w = model[0].weight
    ptr = resident(w).unsafe_buffer_pointer()
    step(x, y)
    assert resident(w).unsafe_buffer_pointer() == ptr


def test_a_view_taken_before_compiled_steps_sees_every_update():
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    step(x, y)
    eager_step(x, y)
    w = model[0].weight
    view = w.detach()[1]            # shares w's memory
    flat = w.detach().view(-1)
    for _ in range(3):
        step(x, y)
        eager_step(x, y)
        # float32 rounding of compiled vs eager steps: relative, plus an absolute floor
        # for weights that pass near zero
        np.testing.assert_allclose(peek(view), peek(eager_model[0].weight)[1], rtol=1e-5,
                                   atol=1e-7)
        np.testing.assert_array_equal(peek(flat), peek(w).reshape(-1))
    # and a write through the view reaches the parameter the next step reads
    with fnx.no_grad():
        view.fill_(0.5)
        eager_model[0].weight[1].fill_(0.5)
    step(x, y)
    eager_step(x, y)
    assert_same_params(model, eager_model)


def test_numpy_taken_before_compiled_steps_shares_memory_with_the_parameter():
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    step(x, y)
    eager_step(x, y)
    b = model[2].bias
    arr = b.detach().numpy()
    for _ in range(3):
        step(x, y)
        eager_step(x, y)
        np.testing.assert_array_equal(arr, peek(b))
        np.testing.assert_allclose(arr, peek(eager_model[2].bias), rtol=1e-5)
    arr[:] = 0.25                   # writes through the array reach the parameter too
    assert peek(b).tolist() == [0.25] * 3


def test_numpy_of_a_resident_tensor_is_writable_and_shared():
    f = fnx.compile(lambda t: t * 2)
    out = f(fnx.tensor([1.0, 2.0]))
    assert is_resident(out)
    arr = out.numpy()
    arr[0] = 7.0
    assert out.tolist() == [7.0, 4.0]
    out.add_(1)
    assert arr.tolist() == [8.0, 5.0]


def test_eager_reads_of_a_resident_tensor_do_not_copy():
    out = fnx.compile(lambda t: t + 1)(fnx.arange(6.0))
    a, b = out + 0, out * 2
    assert is_resident(out)             # reading it left it resident
    assert np.shares_memory(out._data, np.asarray(resident(out)))
    assert b.tolist() == [2.0 * v for v in range(1, 7)] and a.tolist() == out.tolist()


def test_eager_in_place_write_after_a_compiled_step_copies_first():
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    for _ in range(2):
        step(x, y)
        eager_step(x, y)
    w = model[2].weight
    assert is_resident(w)
    with fnx.no_grad():
        w.mul_(0.5)
        eager_model[2].weight.mul_(0.5)
    assert not is_resident(w)
    assert_same_params(model, eager_model)
    for _ in range(2):
        step(x, y)
        eager_step(x, y)
        assert_same_params(model, eager_model)
    assert is_resident(w)


def test_a_result_that_is_an_updated_input_is_that_input():
    # t.add_(1) returns t itself, as eagerly: not a second tensor sharing t's new array
    # (which the next call could not donate), and the values go on accumulating in t
    f = fnx.compile(lambda t: t.add_(1))
    t = fnx.zeros(4)
    results = [f(t) for _ in range(4)]
    assert all(r is t for r in results)
    assert peek(t).tolist() == [4.0] * 4


def test_the_same_tensor_as_two_arguments_is_not_donated():
    def g(a, b):
        a.add_(b)
        return a.sum()
    f = fnx.compile(g)
    t, e = fnx.ones(3), fnx.ones(3)
    for _ in range(4):
        got, want = f(t, t), g(e, e)
        assert got.item() == want.item()
        assert peek(t).tolist() == peek(e).tolist()


def test_autograd_saved_tensors_see_a_rebind_as_an_in_place_update():
    def run(compiled):
        model, step = setup()
        step = fnx.compile(step) if compiled else step
        x, y = batch()
        step(x, y)
        step(x, y)
        loss = model(x).sum()       # saves the parameters for backward
        step(x, y)                  # updates them
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
    run(compiled=False)
    run(compiled=True)


def test_data_handle_and_parameter_over_a_resident_tensor_share_its_storage():
    out = fnx.compile(lambda t: t * 3)(fnx.ones(3))
    handle = out.data
    handle.add_(1)
    assert out.tolist() == [4.0] * 3
    out2 = fnx.compile(lambda t: t * 3)(fnx.ones(3))
    p = nn.Parameter(out2)
    with fnx.no_grad():
        p.add_(1)
    assert out2.tolist() == [4.0] * 3


def test_data_assigned_behind_the_resident_storage_is_what_the_next_call_reads():
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    step(x, y)
    step(x, y)
    b = model[2].bias
    assert is_resident(b)
    b.data = fnx.zeros(3)
    eager_model, eager_step = setup()
    eager_step(x, y)
    eager_step(x, y)
    eager_model[2].bias.data = fnx.zeros(3)
    # the momentum buffers hold the same values in both: one more step must agree
    step(x, y)
    eager_step(x, y)
    assert_same_params(model, eager_model)


def test_inputs_fed_repeatedly_become_resident_and_stay_exact():
    f = fnx.compile(lambda a, b: a * 3 + b)
    a = fnx.tensor([2 ** 40 + 1, -5], dtype=fnx.int64)
    b = fnx.tensor([1.5, 2.0], dtype=fnx.float64)
    want = [3 * (2 ** 40 + 1) + 1.5, -13.0]
    for _ in range(3):
        assert f(a, b).tolist() == want
    assert is_resident(a) and is_resident(b)
    assert f(a, b).dtype == fnx.float64
    a[1] = 0                        # an eager write: copy first, then the next call sees it
    assert f(a, b).tolist() == [want[0], 2.0]


def test_user_numpy_array_behind_a_tensor_is_never_taken_over():
    arr = np.array([1.0, 2.0], dtype=np.float32)
    t = fnx.from_numpy(arr)
    f = fnx.compile(lambda t: t.mul_(2))
    for _ in range(3):
        f(t)
    assert arr.tolist() == [8.0, 16.0]
    assert not is_resident(t)


def test_deepcopy_save_state_dict_and_print_of_resident_parameters(tmp_path):
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    for _ in range(2):
        step(x, y)
    twin = copy.deepcopy(model)
    assert_same_params(twin, model)
    fnx.save(model.state_dict(), tmp_path / "m.pt")
    loaded = fnx.load(tmp_path / "m.pt")
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(peek(loaded[k]), peek(v))
    assert "Parameter containing" in repr(model[2].bias)
    # a state_dict shares the parameters' storage: it sees the next steps' updates
    sd = model.state_dict()
    for _ in range(2):
        step(x, y)
        for k, v in model.named_parameters():
            np.testing.assert_array_equal(peek(sd[k]), peek(v))
    del sd, v
    gc.collect()
    step(x, y)      # nothing shares the parameters any more: rebound again
    assert all(is_resident(p) for p in model.parameters())
    assert_same_params(twin, twin)


def test_a_held_grad_keeps_its_values_as_with_set_to_none():
    # zero_grad(set_to_none=True) then backward: each step makes new .grad tensors; one the
    # user still holds keeps the values it had (the compiled step may only reuse a .grad
    # tensor nothing else can see)
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    for _ in range(2):
        step(x, y)
        eager_step(x, y)
    held, eager_held = model[0].weight.grad, eager_model[0].weight.grad
    before = peek(held)
    ref, eager_ref = weakref.ref(model[2].bias.grad), weakref.ref(eager_model[2].bias.grad)
    step(x, y)
    eager_step(x, y)
    assert model[0].weight.grad is not held and eager_model[0].weight.grad is not eager_held
    np.testing.assert_array_equal(peek(held), before)
    np.testing.assert_allclose(peek(model[0].weight.grad), peek(eager_model[0].weight.grad),
                               rtol=1e-5, atol=1e-6)
    assert ref() is None and eager_ref() is None     # replaced, not refilled


def test_an_input_refilled_in_place_before_every_call_is_read_fresh():
    f = fnx.compile(lambda a: (a * 2).sum(0))
    buf = fnx.zeros(3, 2)
    for i in range(5):
        buf.copy_(fnx.full((3, 2), float(i)))     # the next batch, written in place
        assert f(buf).tolist() == [6.0 * i, 6.0 * i]
    # written between calls: copied in each time, not made resident again and again
    assert not is_resident(buf)


def test_weights_of_a_compiled_model_become_resident_and_see_eager_updates():
    fnx.manual_seed(0)
    model = nn.Linear(4, 2)
    f = fnx.compile(model)
    x = fnx.randn(3, 4)
    with fnx.no_grad():
        first = peek(f(x))
        assert is_resident(model.weight) and is_resident(model.bias)
        np.testing.assert_allclose(first, peek(model(x)), rtol=1e-6)   # eager reads them
        f(x)
        assert is_resident(model.bias)
        model.bias.add_(1.0)                    # an eager update: copy-on-write
        np.testing.assert_allclose(peek(f(x)), first + 1.0, rtol=1e-6)
        np.testing.assert_allclose(peek(f(x)), peek(model(x)), rtol=1e-6)


def test_copied_parameters_are_read_from_the_entry_computation():
    hlo = """HloModule m

fused {
  %p = f32[4]{0} parameter(0)
  %c = f32[4]{0} copy(%p)
}

ENTRY %main {
  %arrays_0_.1 = f32[4,4]{1,0} parameter(0), metadata={op_name="a"}
  %arrays_1_.1 = f32[4]{0} parameter(1)
  %copy.2 = f32[4,4]{1,0} copy(%arrays_0_.1)
  %fusion = f32[4]{0} fusion(%arrays_1_.1), kind=kLoop, calls=%fused
}
"""
    assert _copied_parameters(hlo) == {0}


def test_a_parameter_over_a_user_array_is_written_in_place_and_its_grad_is_intact():
    # the parameter's NumPy array is the user's: never rebound (copied into instead), and
    # the buffer JAX made of it, though in a donated position, is not one the gradient of
    # the same shape may land in
    def make():
        fnx.manual_seed(0)
        model = nn.Linear(3, 3)
        arr = model.weight.detach().numpy().copy()
        model.weight = nn.Parameter(fnx.from_numpy(arr))
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).square().sum()
            loss.backward()
            opt.step()
            return loss.detach()
        return model, arr, step
    x = fnx.randn(4, 3)
    eager_model, eager_arr, eager_step = make()
    model, arr, step = make()
    step = fnx.compile(step)
    for _ in range(4):
        np.testing.assert_allclose(peek(step(x)), peek(eager_step(x)), rtol=1e-5)
        np.testing.assert_allclose(arr, eager_arr, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(arr, peek(model.weight))
        np.testing.assert_allclose(peek(model.weight.grad), peek(eager_model.weight.grad),
                                   rtol=1e-5, atol=1e-6)
    assert not is_resident(model.weight)


def _donations(step):
    """Each compiled program's donations: the positions asked for -> those it made."""
    program = step.entries()[-1]._plan.program
    kept = {}
    for p in [program, *program._derived]:
        kept.update(p._kept)
    return kept


@pytest.mark.parametrize("widths, all_donated", [((32, 256, 256, 10), False),
                                                 ((8, 64, 64, 64), True)])
def test_donations_xla_would_copy_are_dropped_unless_that_costs_memory(widths,
                                                                       all_donated):
    # XLA copies a donated weight that the backward reads (all but the first layer's).
    # One large copy (256x256; the last layer's is 10x256): a fresh output buffer instead
    # costs no more memory and saves the copy. Two of one size: XLA copies them in turn
    # through one temporary buffer, while fresh outputs would all live at once, so the
    # donations are kept (as on bench_compile_memory's model).
    def make():
        fnx.manual_seed(0)
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        model = nn.Sequential(*layers[:-1])
        opt = optim.SGD(model.parameters(), lr=0.1)
        return model, models.training_step(model, opt, nn.CrossEntropyLoss())
    eager_model, eager_step = make()
    model, step = make()
    step = fnx.compile(step)
    rng = np.random.default_rng(0)
    x = fnx.tensor(rng.standard_normal((4, widths[0])).astype(np.float32))
    y = fnx.tensor(rng.integers(0, widths[-1], 4))
    for _ in range(3):
        np.testing.assert_allclose(peek(step(x, y)), peek(eager_step(x, y)), rtol=1e-5)
    assert_same_params(model, eager_model)
    donations = _donations(step)
    assert donations
    for asked, made in donations.items():
        assert (made == asked) == all_donated, (asked, made)


def test_a_write_through_an_input_view_is_seen_through_its_base():
    # a base and its view fed as two inputs: the program treated them as independent, so
    # base.sum() missed the write (0, 2, 4). Such calls run eagerly, with a warning, on
    # every path (a later call aliasing what the first did not fails the entry's check)
    def f(base, view, x):
        view.add_(x)
        return base.sum()
    g = fnx.compile(f)
    c = fnx.zeros(4)
    assert [g(c, fnx.zeros(2), fnx.ones(2)).item() for _ in range(3)] == [0.0] * 3
    b = fnx.zeros(4)
    v = b[:2]
    with pytest.warns(UserWarning, match="shares memory with another of its inputs"):
        got = [g(b, v, fnx.ones(2)).item() for _ in range(3)]
    assert got == [2.0, 4.0, 6.0]
    assert b.tolist() == [3.0, 3.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="shares memory with another of its inputs"):
        fnx.compile(f, fullgraph=True)(b, v, fnx.ones(2))    # no eager run: nothing written
    assert b.tolist() == [3.0, 3.0, 0.0, 0.0]
    state = fnx.zeros(4)
    window = state[1:3]

    def h(x):                   # the same through globals read when called
        window.add_(x)
        return state.sum()
    k = fnx.compile(h)
    assert [k(fnx.ones(2)).item() for _ in range(3)] == [2.0, 4.0, 6.0]
