"""nn.PairwiseDistance and nn.CosineSimilarity against NumPy."""
import numpy as np

import fnx


def test_pairwise_distance_module_matches_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    for p in (1.0, 2.0, 3.0):
        m = fnx.nn.PairwiseDistance(p=p, eps=1e-6, keepdim=True)
        want = (np.abs(a - b + 1e-6) ** p).sum(-1, keepdims=True) ** (1 / p)
        np.testing.assert_allclose(m(fnx.tensor(a), fnx.tensor(b)).numpy(), want, rtol=1e-10)
    assert fnx.nn.modules.distance.PairwiseDistance is fnx.nn.PairwiseDistance


def test_cosine_similarity_module_matches_numpy():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    want = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    got = fnx.nn.CosineSimilarity(dim=1)(fnx.tensor(a), fnx.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10)
