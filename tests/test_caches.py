"""What the engine remembers or puts off to save time must not change an answer: a remembered
normal form is the one computed afresh, a maximum left unevaluated takes the right value once
numbers are put in, and a Gauss rule computed at more digits than asked for is still exact."""

from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from sympy import Float, Integer, Sum

from sdpa_proofs import E, MaxOver, d, i, j, k, n, q, z
from sdpa_proofs.algebra import _canonical, algebraically_equal, canonical
from sdpa_proofs.distributions import GAUSS_RULES, LAPLACE, NORMAL
from sdpa_proofs.errors import UnsupportedExpression
from sdpa_proofs.models import MODELS

INNER_SHARED = Sum(E(q[i] ** 2 * Sum(E(q[i] * q[j]), (j, 1, d))), (i, 1, d))
INNER_OWN = Sum(E(q[i] ** 2 * Sum(E(q[j] ** 2), (j, 1, d))), (i, 1, d))


@pytest.mark.parametrize("first, second", [(INNER_SHARED, INNER_OWN), (INNER_OWN, INNER_SHARED)])
def test_a_remembered_normal_form_is_the_one_computed_afresh(first, second):
    """In either order, and the two forms stay apart: d sigma^4 against d^2 sigma^4."""
    remembered = [canonical(first), canonical(second)]
    assert remembered == [_canonical(first), _canonical(second)]
    assert remembered[0] != remembered[1]
    assert algebraically_equal(first, second) is not True


def test_a_float_is_never_mistaken_for_the_integer_of_the_same_value():
    """SymPy before 1.13 has 2.0 == 2; the normal form of 2 q_1 must not come back as 2.0 q_1."""
    as_float, as_integer = Float(2.0) * q[1], Integer(2) * q[1]
    assert canonical(as_float).has(Float)
    assert not canonical(as_integer).has(Float)


def test_a_maximum_of_symbolic_values_takes_the_largest_once_numbers_are_in():
    written = MaxOver(z[i] ** 2 - z[i], (i, 1, 4)).doit()
    values = {z[1]: sp.Rational(1, 3), z[2]: -2, z[3]: sp.Rational(5, 2), z[4]: 0}
    expected = max(float(v) ** 2 - float(v) for v in values.values())  # 6, at z_2 = -2
    assert written.has(z[1]) and written.has(z[4])
    assert float(written.xreplace(values)) == pytest.approx(expected, rel=1e-15)


def test_a_maximum_of_numbers_is_a_number():
    largest = max(Fraction(v, 2) - Fraction(v * v, 10) for v in range(1, 6))  # 3/5, at 2 and 3
    assert MaxOver(sp.Rational(1, 2) * i - i ** 2 / 10, (i, 1, 5)).doit() == largest
    assert MaxOver(n, (i, 1, 3)).doit() == n


@pytest.mark.parametrize("family, even_moment", [
    (NORMAL, lambda m: sp.factorial2(m - 1)),        # E[X^m] = (m - 1)!! for X ~ N(0, 1)
    (LAPLACE, lambda m: sp.factorial(m) / sp.Integer(2) ** (m // 2)),  # m! b^m, b = 1/sqrt 2
])
@pytest.mark.parametrize("dps", [30, 45, 48])
def test_a_rule_at_a_precision_tier_integrates_the_exact_moments_to_the_digits_asked(
        family, even_moment, dps):
    points = 8
    with mpmath.workdps(dps):
        rule = family.rule(points, mpmath.mpf(1), dps)
        for m in range(0, 2 * points, 2):
            value = mpmath.fsum(w * x ** m for w, x in rule)
            exact = mpmath.mpf(sp.N(even_moment(m), dps + 10))
            assert abs(value - exact) <= exact * mpmath.mpf(10) ** -(dps - 2)


def test_checks_at_45_and_48_digits_share_one_rule():
    NORMAL.rule(5, mpmath.mpf(1), 45)
    NORMAL.rule(5, mpmath.mpf(1), 48)
    assert len([key for key in GAUSS_RULES if key[:2] == (5, "hermite")]) == 1


def test_workers_start_with_the_parents_objects_frozen_and_the_parent_frees_its_own():
    """gc.freeze() keeps the child's collector off the parent's objects (fewer copied pages);
    the parent must unfreeze at once, or nothing it allocated before would ever be freed."""
    import gc
    import pickle

    from sdpa_proofs.isolation import _Task, run_tasks

    seen = []
    task = _Task("frozen?", lambda extend: pickle.dumps(gc.get_freeze_count()), (), 30,
                 lambda payload, reason: seen.append(pickle.loads(payload)) or [])
    run_tasks([task], 1)
    assert seen and seen[0] > 0  # the child inherited the frozen objects
    assert gc.get_freeze_count() == 0


def test_a_remembered_pointwise_side_is_its_value_at_those_coordinates_and_that_precision():
    """A chain's right side is the next step's left side at the same points, remembered: at
    other coordinates, or with more digits (as when a check raises the precision), it is
    evaluated afresh.  The reference is mpmath on the same numbers."""
    from sdpa_proofs.numeric import _pointwise_side, evaluator

    side = z[1] ** 2 + sp.exp(z[2])
    for dps in (30, 90, 30):
        with mpmath.workdps(dps):
            for first, second in [(1, 2), (3, -1), (1, 2)]:
                values = {z[1]: mpmath.mpf(first) / 7, z[2]: mpmath.mpf(second) / 3}
                value, size = _pointwise_side(side, values, evaluator(values))
                expected = (mpmath.mpf(first) / 7) ** 2 + mpmath.exp(mpmath.mpf(second) / 3)
                assert abs(value - expected) <= expected * mpmath.mpf(10) ** (2 - dps)
                assert size >= abs(value)


@pytest.mark.parametrize("expr", [
    sp.exp(2 * q[1] - q[2]), sp.log(1 + q[1] ** 2), sp.Max(q[1], q[2] ** 2), sp.Abs(q[1] - 1),
    (1 + q[1] ** 2) ** q[2], sp.tanh(q[1] * q[2]),
])
def test_a_remembered_derivative_template_gives_each_expression_its_own_slope(expr):
    """The template is remembered per function, position and other arguments; put around an
    expression's own argument it is SymPy's derivative of that expression, taken afresh (the
    first expression it was made for must not leak into another's: exp(u) and exp(v))."""
    from sdpa_proofs.algebra import partial_derivative

    other = expr.xreplace({q[1]: q[3], q[2]: q[4]})
    point = {q[1]: sp.Rational(3, 7), q[2]: sp.Rational(-5, 4), q[3]: sp.Rational(9, 5),
             q[4]: sp.Rational(2, 3)}
    for e in (expr, other, expr):  # the second and third from the remembered template
        values = [sp.N(a.xreplace(point), 30) for a in e.args]
        for at in range(len(e.args)):
            taken = partial_derivative(e, at)
            assert taken is not None and taken.free_symbols <= e.free_symbols

            def moved(t, at=at, e=e, values=values):  # f with argument ``at`` moved to t
                return mpmath.mpf(sp.N(e.func(*values[:at], sp.Float(t, 60),
                                              *values[at + 1:]), 60))
            with mpmath.workdps(30):
                numerical = mpmath.diff(moved, mpmath.mpf(values[at]))
            exact = sp.N(taken.xreplace(point), 30)
            assert abs(exact - numerical) < 1e-12 * max(1, abs(exact))


def test_the_evaluator_finds_an_entry_by_its_base_and_indices():
    """Writing sums out makes a new q_1 in every term: each copy has q_1's value, and k_1, of
    another base, its own."""
    from sdpa_proofs.numeric import evaluator

    value_of = evaluator({q[1]: mpmath.mpf(2), k[1]: mpmath.mpf(3)})
    copies = [sp.Indexed(q, 1), sp.Indexed(q, Integer(1)), q[1]]
    assert [value_of(c) for c in copies] == [2, 2, 2]
    assert value_of(sp.Indexed(k, 1)) == 3 and value_of(q[1] * k[1] + q[1]) == 8
    with pytest.raises(UnsupportedExpression, match="not a real number"):  # q_2 has none
        value_of(q[2])


INDEX_PATTERNS = [((1, 1), (2, 2), (5, 5)), ((1, 2), (2, 5), (3, 4)), ((2, 1), (5, 3))]


@pytest.mark.parametrize("name", sorted(
    name for name, model in MODELS.items() if model.integration_key([q[1]])))
def test_monomials_with_equal_integration_keys_integrate_to_the_same_numbers(name):
    """A remembered E[q_i^2 k_j] serves every (i, j) whose key is equal (with the integrand
    written in the variables' positions): those must be the same numbers bit for bit when
    integrated afresh; q_1 k_1 and q_1 k_2 (correlated at equal indices only) never share a
    key."""
    model = MODELS[name]
    point = model.parameter_points[0] if model.parameter_points else {}
    vectors = [v for v in (q, k) if v in model.loadings] or [next(iter(model.loadings))]
    first, second = vectors[0], vectors[-1]
    keys = set()
    for pattern in INDEX_PATTERNS:
        results = set()
        for a, b in pattern:
            variables = sorted({first[a], second[b]}, key=sp.default_sort_key)
            degrees = {first[a]: 2}  # q_i^2 k_j, or z_i^2 z_j for a model of z alone
            degrees[second[b]] = degrees.get(second[b], 0) + 1
            # the key and the integrand as a function of the variables' positions
            key = model.integration_key(variables), tuple(degrees[v] for v in variables)

            def f(*values, variables=variables, degrees=degrees):
                return mpmath.fprod(x ** degrees[v] for x, v in zip(values, variables))
            with mpmath.workdps(45):
                results.add((key, model.integrate(f, variables, degrees, point, 45)))
        assert len(results) == 1  # one key, one value, for the pattern's index pairs
        keys.add(next(iter(results))[0])
    assert len(keys) == len(INDEX_PATTERNS)


def test_a_remembered_expectation_serves_only_its_own_index_pattern():
    """E[q_1 k_1] = rho sigma_q sigma_k under correlated coordinates, remembered for
    E[q_2 k_2]; E[q_1 k_2] is 0 and must not be served the remembered value."""
    from sdpa_proofs import rho, sigma_k, sigma_q
    from sdpa_proofs.models import get_model
    from sdpa_proofs.numeric import NumericSettings, numeric_check

    model, settings = get_model("correlated-normal"), NumericSettings()
    covariance = rho * sigma_q * sigma_k
    assert numeric_check(E(q[1] * k[1]), covariance, model, settings).status == "pass"
    assert numeric_check(E(q[2] * k[2]), covariance, model, settings).status == "pass"
    wrong = numeric_check(E(q[1] * k[2]) + E(q[2] * k[2]), 2 * covariance, model, settings)
    assert wrong.status == "fail" and "sides differ" in wrong.reason


def test_a_recurring_subtree_is_sized_once_and_counts_at_every_occurrence():
    """The softmax's denominator recurs in every p_i: term_size sizes it once per call, and
    each occurrence adds its size (|a| + |b| for a + b): sum_i e^(z_i) / S is sized as n
    terms of size e^(z_i) / S, S's size counted in each."""
    from sdpa_proofs.algebra import term_size
    from sdpa_proofs.numeric import evaluator

    values = {z[1]: mpmath.mpf(1) / 3, z[2]: mpmath.mpf(-2), z[3]: mpmath.mpf(5) / 2}
    denominator = sp.exp(z[1]) + sp.exp(z[2]) + sp.exp(z[3])
    probabilities = sp.Add(*(sp.exp(z[m]) / denominator for m in (1, 2, 3)), evaluate=False)
    asked: list = []

    def special(node):
        asked.append(node)

    with mpmath.workdps(30):
        size = term_size(probabilities, evaluator(values), special)
        alone = mpmath.fsum(term_size(sp.exp(z[m]) / denominator, evaluator(values))
                            for m in (1, 2, 3))
    assert asked.count(denominator) == 1
    assert size == alone and size > 1  # what the terms add to, though the p_i add to 1


def test_integrands_that_share_an_integral_are_probed_alike():
    """The remembered E[cos(k_2) k_2] serves E[cos(k_3) k_3] with the size its terms reached
    at the probes: each, integrated afresh, must reach the same size (review round 57: probes
    seeded by the indices gave 12.3 and 81.9)."""
    from sdpa_proofs.models import get_model
    from sdpa_proofs.numeric import _EXPECTATIONS, _Evaluation

    model = get_model("correlated-normal-means")
    point = model.concrete(model.parameter_points[0], 3)
    found = []
    with mpmath.workdps(45):
        for index in (2, 3):
            _EXPECTATIONS.clear()
            evaluation = _Evaluation(model, point, 45)
            found.append((evaluation.expectation(sp.cos(k[index]) * k[index]),
                          evaluation.scale))
    assert found[0] == found[1] and found[0][1] > abs(found[0][0])


def test_a_side_put_at_a_point_is_remembered_as_put_in_makes_it_and_refusals_are_not():
    """A chain's right side is the next step's left side, put at the same points: remembered,
    it is what put_in makes of it; a number put_in refuses is refused again when asked again."""
    from sdpa_proofs import sigma_q
    from sdpa_proofs.numeric import _at_point
    from sdpa_proofs.realnumbers import MisjudgedNumber, put_in

    side = sp.sqrt(d) * sigma_q ** 2 + sp.floor(sp.exp(d / 7)) + sp.log(1 + sigma_q / d)
    point = {d: Integer(3), sigma_q: sp.Rational(3, 7)}
    assert _at_point(side, point) == put_in(side, point) == _at_point(side, point)
    tiny = sp.floor(-sp.sin(sp.log(1 + d * Integer(10) ** -60)))  # -1 at every d; SymPy: 0
    for _ in range(2):
        try:
            made = _at_point(tiny, {d: Integer(1)})
        except MisjudgedNumber:
            continue
        assert made == -1
