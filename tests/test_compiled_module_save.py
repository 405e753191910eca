"""``fnx.save`` of a compiled module (``torch.save(torch.compile(model))`` works in
PyTorch): the original and the compile settings are stored, and loading compiles afresh."""
import io

import numpy as np

import fnx
from fnx.nn.modules.compiled import OptimizedModule


def test_save_and_load_a_compiled_module():
    fnx.manual_seed(0)
    model = fnx.nn.Sequential(fnx.nn.Linear(3, 2), fnx.nn.ReLU())
    compiled = fnx.compile(model, dynamic=False, fullgraph=True)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    compiled(fnx.tensor(x))
    buf = io.BytesIO()
    fnx.save(compiled, buf)
    buf.seek(0)
    loaded = fnx.load(buf, weights_only=False)
    assert isinstance(loaded, OptimizedModule)
    assert isinstance(loaded._orig_mod, fnx.nn.Sequential)
    assert loaded.forward.dynamic is False and loaded.forward.fullgraph is True
    assert loaded[0].weight is loaded._orig_mod[0].weight
    assert list(loaded.state_dict()) == ["0.weight", "0.bias"]
    w = model[0].weight.detach().numpy()
    b = model[0].bias.detach().numpy()
    np.testing.assert_allclose(loaded(fnx.tensor(x)).detach().numpy(),
                               np.maximum(x @ w.T + b, 0), rtol=1e-6, atol=1e-6)
