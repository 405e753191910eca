"""Small PyTorch names: empty_permuted (strides by hand), Tensor.as_subclass, module_load,
untyped_storage/storage, set_/is_set_to, sym_constrain_range*, sym_fresh_size,
thread_safe_generator. References are hand-computed or NumPy."""
import numpy as np
import pytest

import fnx


@pytest.mark.parametrize("size,layout,stride", [
    ((2, 3, 4), (0, 2, 1), (12, 1, 3)),
    ((2, 3, 4, 5), (0, 2, 3, 1), (60, 1, 15, 3)),     # NHWC
    ((2, 3), (1, 0), (1, 2)),
    ((2, 0, 3), (2, 1, 0), (1, 2, 2)),
    ((), (), ()),
])
def test_empty_permuted_strides(size, layout, stride):
    t = fnx.empty_permuted(size, layout)
    assert tuple(t.shape) == size and t.stride() == stride
    # stride(layout[i]) is the contiguous stride of position i (PyTorch's definition)
    perm = [size[d] for d in layout]
    contig = [int(np.prod([max(s, 1) for s in perm[i + 1:]])) for i in range(len(perm))]
    assert all(t.stride(layout[i]) == contig[i] for i in range(len(layout)))


def test_empty_permuted_options_and_errors():
    t = fnx.empty_permuted((2, 3), (1, 0), dtype=fnx.float64, requires_grad=True)
    assert t.dtype is fnx.float64 and t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError, match="len\\(size\\) = 2 is not equal to "
                                           "len\\(physical_layout\\) = 1"):
        fnx.empty_permuted((2, 3), (0,))
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        fnx.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match="expected to be between 0 and 1, but got 2 at "
                                           "index 1"):
        fnx.empty_permuted((2, 3), (0, 2))


class Tagged(fnx.Tensor):
    pass


def test_as_subclass_aliases_and_differentiates():
    x = fnx.tensor([1.0, 2.0], requires_grad=True)
    y = x.as_subclass(Tagged)
    assert type(y) is Tagged and y.requires_grad
    (y * fnx.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]
    b = fnx.zeros(2)
    c = b.as_subclass(Tagged)
    c[0] = 5.0
    assert b.tolist() == [5.0, 0.0]
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        b.as_subclass(int)


def test_module_load():
    p, v = fnx.zeros(2), fnx.tensor([1.0, 2.0], requires_grad=True)
    out = p.module_load(v)
    assert out is not p and out is not v and not out.requires_grad
    assert p.tolist() == [1.0, 2.0] and out.tolist() == [1.0, 2.0]
    q = fnx.zeros(2)
    out = q.module_load(v, assign=True)
    assert q.tolist() == [0.0, 0.0] and out.tolist() == [1.0, 2.0] and not out.requires_grad


def test_storages_describe_shared_memory():
    x = fnx.tensor(np.arange(6, dtype=np.float32))
    v = x[2:4]
    s, sv = x.untyped_storage(), v.untyped_storage()
    assert s.nbytes() == sv.nbytes() == 24 == len(s) == s.size()
    assert s.data_ptr() == sv.data_ptr() == x.data_ptr() and v.storage_offset() == 2
    assert s.is_alias_of(sv) and not s.is_alias_of(fnx.arange(6.0).untyped_storage())
    assert s.tolist() == list(np.arange(6, dtype=np.float32).tobytes())
    ts = v.storage()
    assert (ts.dtype, ts.size(), ts.element_size(), ts.nbytes()) == (fnx.float32, 6, 4, 24)
    assert ts.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert ts.untyped().nbytes() == 24 and str(ts.device) == "cpu"
    assert fnx.is_storage(s) and fnx.is_storage(ts) and not fnx.is_storage(x)


def test_set_views_the_source_memory():
    b = fnx.arange(6.0)
    a = fnx.zeros(3)
    assert a.set_(b, 1, (2, 2), (2, 1)) is a
    np.testing.assert_array_equal(a.numpy(), np.lib.stride_tricks.as_strided(
        np.arange(6.0, dtype=np.float32)[1:], (2, 2), (8, 4)))
    assert a.stride() == (2, 1) and a.storage_offset() == 1
    assert not a.is_set_to(b) and not b.is_set_to(a)
    a[1, 1] = -1.0
    assert b.tolist() == [0.0, 1.0, 2.0, 3.0, -1.0, 5.0]
    c = fnx.zeros(1).set_(b)
    assert c.is_set_to(b) and b.is_set_to(c) and c.tolist() == b.tolist()
    assert not fnx.arange(3.0).is_set_to(fnx.arange(3.0)) and b.is_set_to(b)
    assert not b[1:].is_set_to(b) and not b.view(2, 3).is_set_to(b)
    d = fnx.zeros(1).set_(b.untyped_storage(), 2, (2,))
    assert d.tolist() == [2.0, 3.0]
    e = fnx.zeros(3).set_()
    assert tuple(e.shape) == (0,)


def test_set_errors_leave_tensor_unchanged():
    a = fnx.zeros(3)
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor "
                                           "of type float"):
        a.set_(fnx.arange(3))
    with pytest.raises(RuntimeError, match="need a storage of 9 elements; it has 6"):
        a.set_(fnx.arange(6.0), 5, (2, 2), (2, 1))
    assert a.tolist() == [0.0, 0.0, 0.0]
    w = fnx.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.set_(fnx.arange(2.0))


def test_sym_constrain_range():
    assert fnx.sym_constrain_range(5, min=0, max=10) is None
    assert fnx.sym_constrain_range(5) is None
    with pytest.raises(RuntimeError, match=r"Invalid value range for 5 between \[6, 10\]\."):
        fnx.sym_constrain_range(5, min=6, max=10)
    with pytest.raises(RuntimeError, match=r"for 5 between \[-9223372036854775808, 4\]"):
        fnx.sym_constrain_range(5, max=4)
    assert fnx.sym_constrain_range_for_size(0) is None
    with pytest.raises(RuntimeError, match=r"for -1 between \[0, 9223372036854775807\]"):
        fnx.sym_constrain_range_for_size(-1)
    assert fnx.sym_fresh_size(5) == 5 and fnx.sym_fresh_size(-5) == -5


def test_thread_safe_generator_outside_thread_workers():
    assert fnx.thread_safe_generator() is None
