"""fnx.compile with a size that keeps changing (a growing sequence length).

Today fnx.compile specializes on every input shape (``dynamic=None``/``False``): each new
size is traced and compiled until ``cache_limit`` programs exist, later ones run eagerly.
These tests pin that a growing T gives eager's answer at every step, that a Python
decision on a size takes the right branch at every size, and that ``dynamic=True`` is
refused (symbolic tracing with ``fnx.graph.symint`` is not wired into the tracer yet).
"""
import warnings

import numpy as np
import pytest

import fnx
from fnx.testing.models import gpt_block, gpt_params


def _generate(block, head, idx, steps, k):
    """nanoGPT-style greedy decode over top-k: the sequence grows by one each step."""
    out = []
    for _ in range(steps):
        h = block(idx)
        logits = fnx.matmul(h[:, -1, :], head)
        vals, pos = fnx.topk(logits, k)
        nxt = pos[:, :1]
        out.append((vals.numpy(), pos.numpy()))
        emb = head[:, nxt.reshape(-1)].T.reshape(idx.shape[0], 1, idx.shape[2])
        idx = fnx.cat([idx, emb], dim=1)
    return out


def test_growing_T_matches_eager_at_every_step():
    C = 16
    params = {k: fnx.tensor(v) for k, v in gpt_params(C).items()}
    eager = gpt_block(params, 2)
    compiled = fnx.compile(eager)
    head = fnx.tensor(np.random.default_rng(1).standard_normal((C, 11)).astype(np.float32))
    x = fnx.tensor(np.random.default_rng(2).standard_normal((1, 1, C)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # cache_limit reached after T=8
        ref = _generate(eager, head, x, 10, 3)
        got = _generate(compiled, head, x, 10, 3)
    for (rv, rp), (gv, gp) in zip(ref, got):
        np.testing.assert_allclose(gv, rv, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(gp, rp)
    assert 1 <= len(compiled.entries()) <= compiled.cache_limit


def test_python_decision_on_a_size_takes_both_branches():
    def f(x):
        if x.shape[1] > 4:
            return x.sum(1) * 2
        return x.sum(1) - 1

    g = fnx.compile(f, dynamic=False)
    rng = np.random.default_rng(0)
    for T in (2, 6, 3, 5, 4, 7):
        a = rng.standard_normal((2, T)).astype(np.float32)
        ref = a.sum(1) * 2 if T > 4 else a.sum(1) - 1
        np.testing.assert_allclose(g(fnx.tensor(a)).numpy(), ref, rtol=1e-5, atol=1e-6)


def test_static_path_reuses_a_program_per_shape():
    g = fnx.compile(lambda x: x * 2, dynamic=False)
    for T in (3, 4, 3, 4, 3):
        a = np.arange(T, dtype=np.float32)
        np.testing.assert_array_equal(g(fnx.tensor(a)).numpy(), a * 2)
    assert len(g.entries()) == 2


def test_dynamic_true_is_refused_until_symbolic_tracing_lands():
    with pytest.raises(NotImplementedError, match="symbolic shapes"):
        fnx.compile(lambda x: x, dynamic=True)
