"""A compiled step's small gradients come back packed in one array (fnx.lower.packed_grads):
every ``.grad`` is still exactly eager's, read at any step or never, held or replaced,
accumulated into by an eager backward, kept through a failed call; the array is reused
as the next step's buffer only while nothing read it."""
import jax
import numpy as np
import pytest

import fnx
from fnx import nn, optim
from fnx.lower.packed_grads import PACK_BYTES, GradPack, PackedGrad, packable
from fnx.testing import models


def peek(t) -> np.ndarray:
    return np.array(t.tolist(), dtype=np.float32)


def setup(opt="sgd", sizes=(6, 8, 3)):
    fnx.manual_seed(0)
    model = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(),
                          nn.Linear(sizes[1], sizes[2]))
    make = {"sgd": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
            "adam": lambda ps: optim.Adam(ps, lr=0.01)}[opt]
    return model, models.training_step(model, make(model.parameters()), nn.CrossEntropyLoss())


def batch(i=0, n=6, classes=3):
    rng = np.random.default_rng(i)
    return (fnx.tensor(rng.standard_normal((5, n)).astype(np.float32)),
            fnx.tensor(rng.integers(0, classes, 5)))


def assert_grads_equal(model, eager_model):
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(peek(p.grad), peek(q.grad), rtol=1e-5, atol=1e-6)


def packed(model) -> bool:
    return all(isinstance(p._grad, PackedGrad) for p in model.parameters())


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_grads_equal_eager_whether_read_every_step_or_rarely(opt):
    eager_model, eager_step = setup(opt)
    model, step = setup(opt)
    step = fnx.compile(step)
    for i in range(9):
        x, y = batch(i)
        np.testing.assert_allclose(peek(step(x, y)), peek(eager_step(x, y)), rtol=1e-5)
        assert packed(model)
        if i % 3 == 0:          # read: each .grad becomes a tensor of its own
            assert_grads_equal(model, eager_model)
            assert not packed(model)
        for p, q in zip(model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(peek(p), peek(q), rtol=1e-5, atol=1e-6)
    assert_grads_equal(model, eager_model)


def test_an_unread_pack_is_the_next_steps_buffer_and_a_read_one_is_not():
    model, step = setup()
    step = fnx.compile(step)
    x, y = batch()
    for _ in range(3):
        step(x, y)
    pack = model[0].weight._grad.pack
    ptr = pack.array.unsafe_buffer_pointer()
    step(x, y)
    assert pack.array.unsafe_buffer_pointer() == ptr       # written in place
    held = model[0].bias.grad                               # read: a copy of the slice
    before = peek(held)
    old = pack.array
    step(x, y)
    assert not old.is_deleted()         # a read array is never given back to the program
    np.testing.assert_array_equal(peek(held), before)
    assert model[0].bias.grad is not held


def test_an_eager_backward_accumulates_into_packed_grads():
    def make():
        fnx.manual_seed(1)
        model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2))

        def backward(x):
            model(x).square().sum().backward()      # no zero_grad: .grad accumulates
        return model, backward
    eager_model, eager_backward = make()
    model, backward = make()
    backward = fnx.compile(backward)
    x = fnx.randn(3, 4)
    backward(x)                 # .grad None: the first call's gradients come back packed
    eager_backward(x)
    assert packed(model)
    model(x).sum().backward()   # eager, into the packed gradients
    eager_model(x).sum().backward()
    for k in range(5):
        # the calls that read .grad (accumulating) return it unpacked, and from the
        # third on take the fast path (which had read the .grad the trace had seen)
        backward(x)
        eager_backward(x)
        if k % 2:
            assert_grads_equal(model, eager_model)
    assert not packed(model)
    model(x).sum().backward()
    eager_model(x).sum().backward()
    assert_grads_equal(model, eager_model)


def test_a_grad_set_to_none_or_replaced_between_steps():
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    for i in range(3):
        step(*batch(i))
        eager_step(*batch(i))
    model[0].bias.grad = None
    eager_model[0].bias.grad = None
    model[2].weight.grad = fnx.ones(3, 8)
    eager_model[2].weight.grad = fnx.ones(3, 8)
    for i in range(3, 6):
        step(*batch(i))
        eager_step(*batch(i))
    assert_grads_equal(model, eager_model)


def test_a_failed_check_leaves_the_packed_grads_as_they_were():
    eager_model, eager_step = setup()
    model, step = setup()
    step = fnx.compile(step)
    for i in range(4):          # (not read: the last call's array is given as the buffer)
        step(*batch(i))
        eager_step(*batch(i))
    want = [peek(q.grad) for q in eager_model.parameters()]
    x, _ = batch(9)
    with pytest.raises(IndexError, match="out of bounds"):
        step(x, fnx.tensor([0, 1, 7, 0, 1]))                # class 7 of 3
    for p, w in zip(model.parameters(), want):
        np.testing.assert_allclose(peek(p.grad), w, rtol=1e-5, atol=1e-6)
    step(*batch(4))
    eager_step(*batch(4))
    assert_grads_equal(model, eager_model)


def test_value_checks_off_reach_the_packed_program():
    model, step = setup()
    step = fnx.compile(step, options={"value_checks": False})
    for i in range(3):
        step(*batch(i))
    entry = step.entries()[-1]
    assert entry._plan.pack is not None
    assert not entry._plan.program.check_values


def test_large_gradients_stay_one_output_each():
    # packing copies the gradients once more: not worth it past PACK_BYTES per output
    model, step = setup(sizes=(256, 256, 3))
    step = fnx.compile(step)
    for i in range(3):
        step(*batch(i, n=256))
    assert not packed(model)
    assert all(isinstance(p._grad._jax, jax.Array) for p in model.parameters())
    shapes = [(256, 256), (256,), (3, 256), (3,)]
    grads = [(0, k, "_jax", fnx.float32, None, s) for k, s in enumerate(shapes)]
    assert not packable(grads)
    assert packable([(0, k, "_jax", fnx.float32, None, (PACK_BYTES // 8,)) for k in range(3)])
    assert not packable([(0, 0, "_jax", fnx.float32, None, (4,)),
                         (1, 1, "_jax", fnx.float64, None, (4,))])      # two dtypes


def test_layout_of_a_pack():
    pack = GradPack([3, 1], fnx.float32, [(2, 3), (3,)])
    assert pack.layout == [(0, 6, (2, 3)), (6, 3, (3,))]
    pack.array = jax.numpy.arange(9, dtype=jax.numpy.float32)
    a, b = pack.tensors(pack.array)
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(pack.markers[1].tensor().numpy(), [6, 7, 8])
    assert pack.viewed and pack.sink([None] * 4) is None


# ---------------------------------------------------------------------------- .grad read
# A step that reads .grad (accumulation, zero_grad(set_to_none=False)) reads the .grad of
# the call, not the tensor the trace saw: the step itself replaces that tensor.

def _accumulating(set_to_none):
    fnx.manual_seed(2)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)

    def step(xs, ys):           # two micro-batches per optimizer step
        opt.zero_grad(set_to_none=set_to_none)
        for x, y in zip(xs, ys):
            (nn.functional.cross_entropy(model(x), y) / 2).backward()
        opt.step()
    return model, step


@pytest.mark.parametrize("set_to_none", [True, False])
def test_gradient_accumulation_steps_equal_eager(set_to_none):
    eager_model, eager_step = _accumulating(set_to_none)
    model, step = _accumulating(set_to_none)
    step = fnx.compile(step)
    rng = np.random.default_rng(3)
    for i in range(6):
        xs = [fnx.tensor(rng.standard_normal((5, 4)).astype(np.float32)) for _ in range(2)]
        ys = [fnx.tensor(rng.integers(0, 3, 5)) for _ in range(2)]
        step(xs, ys)
        eager_step(xs, ys)
        for p, q in zip(model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(peek(p), peek(q), rtol=1e-5, atol=1e-6)
    assert_grads_equal(model, eager_model)


# ---------------------------------------------------------------------------- what packs

def _step_with(model, opt, after_backward=None, result=None):
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if after_backward is not None:
            after_backward(model)
        opt.step()
        return loss.detach() if result is None else result(model)
    return step


@pytest.mark.parametrize("case", ["returns_grad", "clips", "frozen_layer", "float64_layer"])
def test_steps_around_packing_equal_eager(case):
    def make():
        fnx.manual_seed(4)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        if case == "frozen_layer":
            model[0].requires_grad_(False)
        if case == "float64_layer":
            model[2].double()
        opt = optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1,
                        momentum=0.9)
        clip = (lambda m: nn.utils.clip_grad_norm_(m.parameters(), 0.5)) \
            if case == "clips" else None
        result = (lambda m: m[2].weight.grad) if case == "returns_grad" else None
        if case == "float64_layer":
            inner = model

            class Mixed(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.m = inner

                def forward(self, x):
                    return self.m[2](self.m[1](self.m[0](x)).double()).float()
            model = Mixed()
        return model, _step_with(model, opt, clip, result)
    eager_model, eager_step = make()
    model, step = make()
    step = fnx.compile(step)
    for i in range(5):
        x, y = batch(i)
        np.testing.assert_allclose(peek(step(x, y)), peek(eager_step(x, y)), rtol=1e-5,
                                   atol=1e-6)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        assert (p.grad is None) == (q.grad is None)
        np.testing.assert_allclose(peek(p), peek(q), rtol=1e-5, atol=1e-6)
        if q.grad is not None:
            np.testing.assert_allclose(peek(p.grad), peek(q.grad), rtol=1e-5, atol=1e-6)
    entry = step.entries()[-1]
    assert (entry._plan.pack is not None) == (case in ("clips", "frozen_layer"))
