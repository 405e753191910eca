"""``fnx.export``: export -> module / save -> load -> module / StableHLO under plain JAX give
the eager outputs for an MLP, a GPT block and a CNN, at two batch sizes from one export with
a symbolic batch ``Dim``; and the bad inputs: data-dependent control flow names its line, a
size outside a Dim's range names the dim, a tampered file is refused. References: NumPy
(the MLP), a jax.numpy implementation of the GPT block (``fnx.testing.models``), and fnx
eager (the spec: an exported program computes what the model computes)."""
import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import jax
import numpy as np
import pytest

import fnx
from fnx import nn
from fnx.export import Dim
from fnx.testing import models

BATCH = Dim("batch", min=1, max=64)


def mlp():
    fnx.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5)).eval()


def mlp_numpy(model, x):
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    h = np.maximum(x @ sd["0.weight"].T + sd["0.bias"], 0)
    return h @ sd["2.weight"].T + sd["2.bias"]


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        h = fnx.max_pool2d(self.bn(self.conv(x)).relu(), 2)
        return self.fc(h.flatten(1))


def cnn():
    fnx.manual_seed(1)
    m = CNN()
    m.bn.running_mean.copy_(fnx.randn(8) * 0.1)
    m.bn.running_var.copy_(fnx.rand(8) + 0.5)
    return m.eval()


GPT_C, GPT_HEADS, GPT_T = 16, 2, 6


def gpt():
    p = {k: fnx.tensor(v) for k, v in models.gpt_params(GPT_C).items()}
    return models.gpt_block(p, GPT_HEADS), p


def inputs(name, batch, seed=0):
    rng = np.random.default_rng(seed + batch)
    shape = {"mlp": (batch, 12), "cnn": (batch, 3, 8, 8), "gpt": (batch, GPT_T, GPT_C)}[name]
    return rng.standard_normal(shape).astype(np.float32)


def make(name):
    if name == "gpt":
        return gpt()[0]
    return {"mlp": mlp, "cnn": cnn}[name]()


def export_model(name):
    model = make(name)
    ep = fnx.export.export(model, (fnx.tensor(inputs(name, 4)),),
                           dynamic_shapes=({0: BATCH},))      # by position
    return model, ep


@pytest.fixture(scope="module")
def exported():
    return {name: export_model(name) for name in ("mlp", "gpt", "cnn")}


@pytest.mark.parametrize("name", ["mlp", "gpt", "cnn"])
@pytest.mark.parametrize("batch", [4, 9])
def test_module_matches_eager(exported, name, batch):
    model, ep = exported[name]
    x = inputs(name, batch)
    with fnx.no_grad():
        want = model(fnx.tensor(x)).numpy()
    got = ep.module()(fnx.tensor(x))
    assert got.shape == want.shape == (batch, *want.shape[1:])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


def test_mlp_matches_numpy(exported):
    model, ep = exported["mlp"]
    x = inputs("mlp", 7)
    np.testing.assert_allclose(ep.module()(fnx.tensor(x)).numpy(), mlp_numpy(model, x),
                               rtol=1e-4, atol=1e-5)


def test_gpt_block_matches_a_jax_implementation(exported):
    _, ep = exported["gpt"]
    x = inputs("gpt", 3)
    params = models.gpt_params(GPT_C)
    with jax.enable_x64(False):
        want = np.asarray(models.jax_gpt_block(GPT_HEADS)(params, x))
    np.testing.assert_allclose(ep.module()(fnx.tensor(x)).numpy(), want, rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_save_load_runs_without_the_model(exported, tmp_path, name):
    model, ep = exported[name]
    path = tmp_path / f"{name}.fnxexport"
    fnx.export.save(ep, path)
    loaded = fnx.export.load(path)
    assert loaded.graph is None and "def forward" in str(loaded)
    for batch in (2, 11):
        x = inputs(name, batch)
        with fnx.no_grad():
            want = model(fnx.tensor(x)).numpy()
        np.testing.assert_allclose(loaded.module()(fnx.tensor(x)).numpy(), want,
                                   rtol=1e-4, atol=1e-5)
    assert sorted(loaded.state_dict) == sorted(ep.state_dict)


def test_signature_and_state(exported):
    model, ep = exported["mlp"]
    sig = ep.graph_signature
    assert sig.user_inputs == ["input"]      # Sequential.forward's parameter
    assert sorted(sig.parameters) == sorted(k for k, _ in model.named_parameters())
    assert sig.input_specs[0].shape == ("batch", 12)
    for name, t in ep.state_dict.items():
        np.testing.assert_array_equal(t.detach().numpy(),
                                      model.state_dict()[name].detach().numpy())
    cnn_sig = exported["cnn"][1].graph_signature
    assert {"bn.running_mean", "bn.running_var"} <= set(cnn_sig.buffers)
    # a closure's weights are constants
    assert {s.kind for s in exported["gpt"][1].graph_signature.input_specs} == \
        {"user_input", "constant"}


def test_print_reads_as_python(exported):
    _, ep = exported["mlp"]
    text = str(ep)
    assert 'def forward(input_1: "f32[4, 12]", p_0_weight: "f32[32, 12]"' in text
    assert "fnx.ops.aten" in text
    assert "Range constraints: batch: [1, 64]" in text


def test_stablehlo_text_and_symbolic_batch(exported):
    _, ep = exported["gpt"]
    mlir = ep.mlir_module()
    assert "stablehlo" in mlir and "func.func public @main" in mlir
    exp = ep.to_jax()
    assert str(exp.in_avals[0].shape[0]) == "batch"


def test_run_decompositions(exported):
    _, ep = exported["mlp"]
    core = ep.run_decompositions("core")
    prims = ep.run_decompositions("prims")
    assert {n.target.namespace for n in prims.graph.calls()} == {"prims"}
    assert "aten::linear" not in {str(n.target) for n in core.graph.calls()}
    x = fnx.tensor(inputs("mlp", 3))
    np.testing.assert_array_equal(core.module()(x).numpy(), ep.module()(x).numpy())


PLAIN_JAX = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jax
    from jax import export
    job = json.load(open(sys.argv[1]))
    out = {}
    for name, (program, arrays) in job.items():
        exp = export.deserialize(bytearray(open(program, "rb").read()))
        res = exp.call(*[np.load(a) for a in arrays])
        np.save(name + ".out.npy", np.asarray(res[0]))
        out[name] = name + ".out.npy"
    assert not any(m == "fnx" or m.startswith("fnx.") for m in sys.modules), "fnx imported"
    json.dump(out, open(sys.argv[2], "w"))
""")


def test_stablehlo_runs_under_plain_jax_in_a_subprocess(exported, tmp_path):
    job, want = {}, {}
    for name, (model, ep) in exported.items():
        program = tmp_path / f"{name}.stablehlo"
        program.write_bytes(ep.to_stablehlo())
        for batch in (2, 5):
            x = inputs(name, batch, seed=3)
            arrays = []
            for i, a in enumerate(ep.flat_inputs(fnx.tensor(x))):
                path = tmp_path / f"{name}_{batch}_{i}.npy"
                np.save(path, a)
                arrays.append(str(path))
            key = f"{name}_{batch}"
            job[key] = (str(program), arrays)
            with fnx.no_grad():
                want[key] = model(fnx.tensor(x)).numpy()
    (tmp_path / "job.json").write_text(json.dumps(job))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-c", PLAIN_JAX, str(tmp_path / "job.json"),
                    str(tmp_path / "out.json")], check=True, env=env, cwd=tmp_path,
                   timeout=300)
    out = json.loads((tmp_path / "out.json").read_text())
    for key, path in out.items():
        np.testing.assert_allclose(np.load(tmp_path / path), want[key], rtol=1e-4, atol=1e-5)
    assert set(out) == set(want)


# ----------------------------------------------------------------------------- bad input

def test_shape_outside_the_dim_range_names_the_dim(exported):
    _, ep = exported["mlp"]
    with pytest.raises(ValueError, match="Dim 'batch'"):
        ep.module()(fnx.ones(65, 12))
    with pytest.raises(ValueError, match="must be 12"):
        ep.module()(fnx.ones(4, 11))


def test_data_dependent_control_flow_names_the_line():
    def f(x):
        if x.sum() > 0:      # the line the error names
            return x * 2
        return x
    with pytest.raises(RuntimeError, match=r"test_export\.py:\d+: +if x\.sum\(\) > 0:"):
        fnx.export.export(f, (fnx.ones(3),))


def test_a_dim_the_program_specializes_is_refused_naming_the_op_and_line():
    def f(x):
        return x.sum() if x.shape[0] > 4 else x.exp()
    with pytest.raises(ValueError, match=r"specializes Dim 'n': aten::exp.*"
                                         r"test_export\.py:\d+: +return x\.sum\(\) if"):
        fnx.export.export(f, (fnx.ones(4),), dynamic_shapes={"x": {0: Dim("n", min=2)}})

    def g(x):
        return x[: x.shape[1] // 2]      # T // 2 is no polynomial of the dims
    with pytest.raises(ValueError, match=r"aten::slice.Tensor .*depends on Dims 'b', 't'.*"
                                         r"test_export\.py:\d+: +return x\[: x\.shape"):
        fnx.export.export(g, (fnx.ones(4, 6),), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("t")}})


def test_example_outside_its_dim_and_bad_specs():
    with pytest.raises(ValueError, match="outside Dim 'b'"):
        fnx.export.export(lambda x: x, (fnx.ones(4),), dynamic_shapes={"x": {0: Dim("b", max=3)}})
    with pytest.raises(ValueError, match="not an argument"):
        fnx.export.export(lambda x: x, (fnx.ones(4),), dynamic_shapes={"y": {0: BATCH}})
    with pytest.raises(ValueError, match="Dim 'b' is 4 at 'x' dim 0 but 3 at 'y' dim 1"):
        fnx.export.export(lambda x, y: x, (fnx.ones(4), fnx.ones(2, 3)),
                          dynamic_shapes={"x": {0: Dim("b")}, "y": {1: Dim("b")}})
    with pytest.raises(ValueError, match="identifier"):
        Dim("not a name")


def test_training_mode_writes_are_refused():
    m = cnn().train()
    with pytest.raises(NotImplementedError, match="model.eval()"):
        fnx.export.export(m, (fnx.ones(2, 3, 8, 8),))


def _saved(ep):
    buf = io.BytesIO()
    fnx.export.save(ep, buf)
    return buf.getvalue()


def _rewrite(data, member, fn):
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for n in zin.namelist():
            blob = zin.read(n)
            zout.writestr(n, fn(blob) if n == member else blob)
    return out.getvalue()


def test_tampered_files_are_refused(exported):
    data = _saved(exported["mlp"][1])
    flipped = _rewrite(data, "weights.fnx", lambda b: b[:-10] + bytes(10))
    with pytest.raises(RuntimeError, match="modified after it was saved.*weights.fnx"):
        fnx.export.load(io.BytesIO(flipped))
    hlo = _rewrite(data, "program.stablehlo", lambda b: b.replace(b"batch", b"bXtch"))
    with pytest.raises(RuntimeError, match="program.stablehlo does not match"):
        fnx.export.load(io.BytesIO(hlo))
    with pytest.raises(RuntimeError, match="corrupted or not an fnx.export"):
        fnx.export.load(io.BytesIO(data[: len(data) // 2]))
    with pytest.raises(RuntimeError, match="not an fnx.export archive"):
        buf = io.BytesIO()
        fnx.save({"w": fnx.ones(2)}, buf)
        fnx.export.load(io.BytesIO(buf.getvalue()))


def test_custom_op_exports_through_its_lowering():
    @fnx.library.custom_op("ex::softplus", mutates_args=(), device_types="cpu")
    def softplus(x: fnx.Tensor) -> fnx.Tensor:
        return fnx.from_numpy(np.log1p(np.exp(x.numpy(force=True))))
    try:
        softplus.register_fake(lambda x: fnx.empty_like(x))
        softplus.register_lowering(lambda x: jax.numpy.logaddexp(x, 0.0))
        ep = fnx.export.export(lambda x: softplus(x) * 2, (fnx.ones(3),))
        x = np.array([-1.0, 0.0, 2.0], np.float32)
        np.testing.assert_allclose(ep.module()(fnx.tensor(x)).numpy(),
                                   2 * np.log1p(np.exp(x)), rtol=1e-6)
        assert "callback" not in ep.mlir_module()
    finally:
        softplus._destroy()


def test_custom_op_without_lowering_is_refused_naming_it():
    @fnx.library.custom_op("ex::host_only", mutates_args=(), device_types="cpu")
    def host_only(x: fnx.Tensor) -> fnx.Tensor:
        return fnx.from_numpy(x.numpy(force=True) + 1)
    try:
        host_only.register_fake(lambda x: fnx.empty_like(x))
        with pytest.raises(NotImplementedError, match="ex::host_only has no lowering"):
            fnx.export.export(lambda x: host_only(x) * 2, (fnx.ones(3),))
    finally:
        host_only._destroy()


# ----------------------------------------------------------------------------- several Dims

SEQ = Dim("seq", min=1, max=32)


@pytest.fixture(scope="module")
def gpt_bt():
    """The GPT block exported once with a symbolic batch and sequence length."""
    block, _ = gpt()
    x = fnx.tensor(np.random.default_rng(0).standard_normal((4, 6, GPT_C), np.float32))
    return block, fnx.export.export(block, (x,), dynamic_shapes={"x": {0: BATCH, 1: SEQ}})


@pytest.mark.parametrize("batch", [2, 7])
@pytest.mark.parametrize("seq", [3, 11])
def test_gpt_block_with_symbolic_batch_and_seq(gpt_bt, batch, seq):
    _, ep = gpt_bt
    x = np.random.default_rng(batch * seq).standard_normal((batch, seq, GPT_C), np.float32)
    with jax.enable_x64(False):
        want = np.asarray(models.jax_gpt_block(GPT_HEADS)(models.gpt_params(GPT_C), x))
    got = ep.module()(fnx.tensor(x)).numpy()
    assert got.shape == (batch, seq, GPT_C)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_gpt_block_symbolic_signature_and_ranges(gpt_bt):
    _, ep = gpt_bt
    assert ep.graph_signature.input_specs[0].shape == ("batch", "seq", GPT_C)
    assert ep.graph_signature.output_specs[0].shape == ("batch", "seq", GPT_C)
    assert [str(d) for d in ep.to_jax().in_avals[0].shape] == ["batch", "seq", str(GPT_C)]
    with pytest.raises(ValueError, match=r"dim 1 is 33, outside the range of Dim 'seq' "
                                         r"\[1, 32\]"):
        ep.module()(fnx.ones(2, 33, GPT_C))


def test_gpt_block_bt_stablehlo_runs_under_plain_jax(gpt_bt, tmp_path):
    block, ep = gpt_bt
    program = tmp_path / "gpt.stablehlo"
    program.write_bytes(ep.to_stablehlo())
    job, want = {}, {}
    for batch, seq in ((2, 3), (2, 9), (5, 3), (5, 9)):
        x = np.random.default_rng(batch + 10 * seq).standard_normal((batch, seq, GPT_C),
                                                                    np.float32)
        arrays = []
        for i, a in enumerate(ep.flat_inputs(fnx.tensor(x))):
            np.save(tmp_path / f"{batch}_{seq}_{i}.npy", a)
            arrays.append(str(tmp_path / f"{batch}_{seq}_{i}.npy"))
        job[f"b{batch}_t{seq}"] = (str(program), arrays)
        with jax.enable_x64(False):
            want[f"b{batch}_t{seq}"] = np.asarray(
                models.jax_gpt_block(GPT_HEADS)(models.gpt_params(GPT_C), x))
    (tmp_path / "job.json").write_text(json.dumps(job))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-c", PLAIN_JAX, str(tmp_path / "job.json"),
                    str(tmp_path / "out.json")], check=True, env=env, cwd=tmp_path,
                   timeout=300)
    out = json.loads((tmp_path / "out.json").read_text())
    assert set(out) == set(want)
    for key, path in out.items():
        np.testing.assert_allclose(np.load(tmp_path / path), want[key], rtol=1e-4, atol=1e-4)


def test_product_of_dims_in_a_view_and_a_shared_dim():
    def f(x, y):
        b, t, c = x.shape
        return x.reshape(b * t, c) @ y, x.mean((0, 1))
    t_dim = Dim("t", max=20)
    ep = fnx.export.export(f, (fnx.ones(3, 4, 5), fnx.ones(5, 2)),
                           dynamic_shapes={"x": {0: Dim("b", max=20), 1: t_dim}})
    rng = np.random.default_rng(1)
    for b, t in ((2, 7), (9, 1)):
        x = rng.standard_normal((b, t, 5)).astype(np.float32)
        y = rng.standard_normal((5, 2)).astype(np.float32)
        flat, mean = ep.module()(fnx.tensor(x), fnx.tensor(y))
        assert flat.shape == (b * t, 2)
        np.testing.assert_allclose(flat.numpy(), x.reshape(b * t, 5) @ y, rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_allclose(mean.numpy(), x.mean((0, 1)), rtol=1e-5, atol=1e-6)
    assert ep.graph_signature.output_specs[0].shape[0] == "b*t"
    # one Dim on two inputs: the sizes must agree on every call
    ep2 = fnx.export.export(lambda x, y: x @ y, (fnx.ones(3, 4), fnx.ones(4, 2)),
                            dynamic_shapes={"x": {1: t_dim}, "y": {0: t_dim}})
    x, y = rng.standard_normal((3, 6)), rng.standard_normal((6, 2))
    np.testing.assert_allclose(ep2.module()(fnx.tensor(x, dtype=fnx.float32),
                                            fnx.tensor(y, dtype=fnx.float32)).numpy(),
                               x @ y, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Dim 't' is 4 at input 'x' dim 1 but 5 at input 'y'"):
        ep2.module()(fnx.ones(3, 4), fnx.ones(5, 2))


# ----------------------------------------------------------------------------- module()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        self.head = nn.Linear(6, 3)
        self.register_buffer("scale", fnx.tensor([1.0, 2.0, 3.0]))
        self.register_buffer("shift", fnx.tensor([0.5, 0.0, -0.5]), persistent=False)

    def forward(self, x):
        return self.head(self.body(x)) * self.scale + self.shift


def net_numpy(sd, shift, x):
    h = np.maximum(x @ sd["body.0.weight"].T + sd["body.0.bias"], 0)
    return (h @ sd["head.weight"].T + sd["head.bias"]) * sd["scale"] + shift


def test_module_is_an_nn_module_with_the_original_state_dict(tmp_path):
    fnx.manual_seed(3)
    net = Net().eval()
    ep = fnx.export.export(net, (fnx.ones(2, 4),), dynamic_shapes={"x": {0: BATCH}})
    sd = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    # the loaded program first: ep.module() shares the original's parameters, as in PyTorch
    for program in (_load(ep, tmp_path), ep):
        m = program.module()
        assert isinstance(m, nn.Module)
        assert list(m.state_dict()) == list(net.state_dict())     # same keys, same order
        assert [k for k, _ in m.named_parameters()] == [k for k, _ in net.named_parameters()]
        assert {k for k, _ in m.named_buffers()} == {"scale", "shift"}
        x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
        np.testing.assert_allclose(m(fnx.tensor(x)).numpy(),
                                   net_numpy(sd, np.array([0.5, 0.0, -0.5]), x),
                                   rtol=1e-5, atol=1e-5)
        # the module reads its state on each call: new weights, no re-export
        new = {k: fnx.tensor(np.full(v.shape, 0.1, np.float32)) for k, v in sd.items()}
        m.load_state_dict(new)
        sd2 = {k: v.numpy() for k, v in new.items()}
        np.testing.assert_allclose(m(fnx.tensor(x)).numpy(),
                                   net_numpy(sd2, np.array([0.5, 0.0, -0.5]), x),
                                   rtol=1e-5, atol=1e-5)


def _load(ep, tmp_path):
    fnx.export.save(ep, tmp_path / "net.fnxexport")
    return fnx.export.load(tmp_path / "net.fnxexport")


def test_data_dependent_control_flow_with_dims_names_the_line():
    def f(x):
        n = int(x.max().item())      # the line the error names
        return x * n
    with pytest.raises(RuntimeError, match=r"test_export\.py:\d+: +n = int\(x\.max"):
        fnx.export.export(f, (fnx.ones(3, 2),), dynamic_shapes={"x": {0: BATCH}})


def test_exported_module_refuses_train_and_eval():
    """The mode is fixed at export; PyTorch's module() raises NotImplementedError too."""
    m = fnx.nn.Sequential(fnx.nn.Linear(2, 3)).eval()
    em = fnx.export.export(m, (fnx.ones(1, 2),)).module()
    with pytest.raises(NotImplementedError, match=r"Calling train\(\) is not supported yet"):
        em.train()
    with pytest.raises(NotImplementedError, match=r"Calling eval\(\) is not supported yet"):
        em.eval()
