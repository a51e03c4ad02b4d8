"""Random expressions on samples: the values Monte Carlo computes, each part once, against the
same numbers computed by hand with NumPy."""

import numpy as np
from sympy import Integer, Sum, exp, log

from sdpa_proofs import n, z
from sdpa_proofs.samplevalues import values_and_sizes
from sdpa_proofs.symbols import m

ROWS, DIM = 50, 7
LOGITS = np.random.default_rng(11).standard_normal((ROWS, DIM))


def at_dim(expr):
    return expr.subs(n, Integer(DIM))


def test_a_softmax_entropy_whose_normaliser_appears_twice_is_the_entropy():
    """H = log Z - sum z_m e^(z_m) / Z with Z = sum e^(z_m): the normaliser and e^(z_m) each
    appear more than once, and each use reads the same numbers."""
    normaliser = Sum(exp(z[m]), (m, 1, n))
    entropy = log(normaliser) - Sum(z[m] * exp(z[m]), (m, 1, n)) / normaliser
    values, sizes = values_and_sizes(at_dim(entropy), {z: LOGITS}, DIM)
    weights = np.exp(LOGITS)
    by_hand = np.log(weights.sum(axis=1)) - (LOGITS * weights).sum(axis=1) / weights.sum(axis=1)
    np.testing.assert_allclose(values, by_hand, rtol=1e-13)
    assert values.shape == (ROWS,) and np.all(sizes >= np.abs(values))


def test_a_part_inside_a_sum_and_beside_it_is_taken_in_the_shape_of_each_place():
    """z_1 inside sum_m z_1 z_m is a column read along the index; beside the sum it is one
    number per sample: z_1 sum_m z_m + z_1."""
    expr = Sum(z[1] * z[m], (m, 1, n)) + z[1] + exp(z[1])
    values, _ = values_and_sizes(at_dim(expr), {z: LOGITS}, DIM)
    first = LOGITS[:, 0]
    by_hand = first * LOGITS.sum(axis=1) + first + np.exp(first)
    assert values.shape == (ROWS,)
    np.testing.assert_allclose(values, by_hand, rtol=1e-13)
