"""What a graph-broken compiled function returns: floats computed from an ``item()`` come
back as Python floats of this call's values, and input tensors returned come back as those
very tensors (eager's types and identity), through the same ``result_template`` /
``restore_result`` as an unbroken compiled call.  References: the function run eagerly."""
import warnings

import numpy as np

import fnx
from fnx.lower.compiled_function import CompiledFunction


def _f(x, y):
    s = (x * 2).sum().item()            # the graph break
    z = x + s
    return s * 3.0, y, z, {"a": s + 1.0, "x": x}, [y, 2], (x,)


def test_graph_broken_result_gives_eager_types_and_identity(monkeypatch):
    traces = []
    original = CompiledFunction._compile
    monkeypatch.setattr(CompiledFunction, "_compile",
                        lambda self, *a, **k: traces.append(1) or original(self, *a, **k))
    g = fnx.compile(_f)
    y = fnx.tensor([5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no eager fallback
        for i in range(3):
            x = fnx.tensor([1.0, 2.0]) + i
            got, want = g(x, y), _f(x, y)
            assert type(got[0]) is float and got[0] == want[0] == 6.0 * (3 + 2 * i)
            assert got[1] is y and got[3]["x"] is x and got[4][0] is y and got[5][0] is x
            assert type(got[3]["a"]) is float and got[3]["a"] == want[3]["a"]
            assert got[4][1] == 2 and type(got[5]) is tuple
            np.testing.assert_array_equal(got[2].numpy(), want[2].numpy())
    assert len(traces) == 1                 # a new item() value does not recompile
