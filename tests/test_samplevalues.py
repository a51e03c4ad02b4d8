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


def test_what_underflows_is_refused_and_an_exact_zero_is_not():
    """A product of factors that are not 0, a power of a number that is not 0 and an
    exponential cannot be 0: where doubles make them 0 (or subnormal) they are refused; a
    factor or base that is exactly 0 makes an exact 0."""
    import pytest

    from sdpa_proofs.samplevalues import UnsupportedForSampling

    tiny = np.array([[1e-200, 1e-200], [0.5, 2.0]])
    zero = np.array([[0.0, 1e-200], [0.5, 2.0]])
    for expr in (z[1] * z[2], z[1] ** 3, exp(-(10 ** 6) * (1 + z[2]))):
        with pytest.raises(UnsupportedForSampling, match="below double precision"):
            values_and_sizes(expr, {z: tiny}, 2)
    for expr in (z[1] * z[2], z[1] ** 3):
        values, _ = values_and_sizes(expr, {z: zero}, 2)
        assert values[0] == 0


def test_arbitrary_values_go_to_the_symbols_nothing_fixes_each_as_its_assumptions_allow():
    """In softmax(z + c) = softmax(z), c is free: it gets a value, z and the index i do not;
    a symbol that is the label of an entry on one side is fixed on the other too; asked again
    with the same names under other assumptions, each symbol gets a value its own allow."""
    from sympy import Symbol

    from sdpa_proofs import i
    from sdpa_proofs.concrete import arbitrary_values

    c = Symbol("c", real=True)
    shifted = exp(z[i] + c) / Sum(exp(z[m] + c), (m, 1, 4))
    values = arbitrary_values([shifted, exp(z[i]) / Sum(exp(z[m]), (m, 1, 4))])
    assert set(values) == {c}
    label = Symbol("z", real=True)
    assert set(arbitrary_values([z[1] + c, label * c])) == {c}
    for assumptions in ({"positive": True}, {"negative": True}, {"integer": True,
                                                                 "even": True}):
        other = Symbol("c", **assumptions)
        value = arbitrary_values([shifted.xreplace({c: other})])[other]
        assert all(getattr(value, f"is_{fact}") for fact in assumptions)


def test_parts_kept_across_expressions_on_the_same_arrays_are_what_each_computes_alone():
    """Claims under one model share a chunk's parts: S in S, S / d and S^2, z_1 read along
    an index and beside a sum; each value is the one computed afresh (NumPy by hand)."""
    from sdpa_proofs.samplevalues import vector_values

    dot = Sum(z[m] * exp(z[m]), (m, 1, n))
    exprs = [dot, dot / n, dot ** 2, Sum(z[1] * z[m], (m, 1, n)) + z[1], z[1]]
    by_hand = (LOGITS * np.exp(LOGITS)).sum(axis=1)
    first = LOGITS[:, 0]
    expected = [by_hand, by_hand / DIM, by_hand ** 2, first * LOGITS.sum(axis=1) + first, first]
    seen: dict = {}
    for expr, truth in zip(exprs, expected):
        shared = vector_values(at_dim(expr), {z: LOGITS}, DIM, None, seen)
        alone = vector_values(at_dim(expr), {z: LOGITS}, DIM)
        np.testing.assert_array_equal(shared, alone)
        np.testing.assert_allclose(shared, truth, rtol=1e-12)
