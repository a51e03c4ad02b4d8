"""The exact moment engine and the numerical integration, each against independent sources:
brute-force expansion at concrete d, textbook moments, plain mpmath.quad and each other."""

import itertools
from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Abs, Rational, Sum

from sdpa_proofs import (
    FAMILIES,
    SD,
    E,
    ExactEvaluator,
    SumOverDistinct,
    Var,
    d,
    i,
    j,
    k,
    l,
    m,
    q,
    sigma_k,
    sigma_q,
)
from sdpa_proofs.exactcheck import exact_check
from sdpa_proofs.indexing import coincidence_patterns
from sdpa_proofs.models import INDEPENDENT
from sdpa_proofs.numeric import NumericSettings, matching_digits, numeric_check

S = Sum(q[i] * k[i], (i, 1, d))
NORMAL_MOMENTS = {0: 1, 2: 1, 4: 3, 6: 15, 8: 105}  # E[Z^n], standard normal


def brute_force_expectation(x, model, dim):
    """E[x] at d = dim by expanding x into monomials and multiplying one-variable moments,
    which the independent model allows: a different algorithm from the engine's counting."""
    explicit = sp.expand(x.subs(d, dim).doit())
    total = sp.S.Zero
    for monomial in sp.Add.make_args(explicit):
        coeff, powers = monomial.as_coeff_mul()
        value = coeff
        for factor in powers:
            base, exp = factor.as_base_exp()
            if isinstance(base, sp.Indexed):
                (latent, sigma), = model.loadings[base.base].items()
                family = next(lat.family for lat in model.latents if lat.name == latent)
                value *= family.moment(int(exp), sigma)
            else:
                value *= factor
        total += value
    return sp.expand(total)


@pytest.mark.parametrize("x", [S, S**2, S**3, S**4, Sum(q[i]**2, (i, 1, d))**2,
                               (S + Sum(q[i], (i, 1, d)))**2 * Sum(k[j]**2, (j, 1, d))])
def test_exact_engine_matches_brute_force(x, model):
    engine = ExactEvaluator(model).value(E(x))
    for dim in (1, 2, 3):
        assert sp.simplify(engine.subs(d, dim) - brute_force_expectation(x, model, dim)) == 0


PAIRINGS = (sp.KroneckerDelta(i, j) * sp.KroneckerDelta(l, m)
            + sp.KroneckerDelta(i, l) * sp.KroneckerDelta(j, m)
            + sp.KroneckerDelta(i, m) * sp.KroneckerDelta(j, l))


@pytest.mark.parametrize("x", [
    Sum(sp.KroneckerDelta(i, j) * E(q[i] * q[j] * k[i] * k[j]), (i, 1, d), (j, 1, d)),
    Sum((sp.KroneckerDelta(i, j) + 2 * sp.KroneckerDelta(j, l)) * E(q[i] * q[j] * q[l]**2),
        (i, 1, d), (j, 1, d), (l, 1, d)),
    Sum(sp.KroneckerDelta(i, 1) * E(q[i]**2), (i, 1, d)) + Sum(sp.KroneckerDelta(i, j), (i, 1, d),
                                                              (j, 1, d)),
    Sum(PAIRINGS**2, (i, 1, d), (j, 1, d), (l, 1, d), (m, 1, d)),  # 3 d^2 + 6 d
])
def test_sums_of_kronecker_deltas_exact_engine_against_brute_force(x, model):
    """A delta of two summation indices is 1 or 0 in each pattern of coinciding indices; the
    reference writes the sums out at d = 1, 2, 3, where SymPy decides every delta."""
    engine = ExactEvaluator(model).value(x)
    for dim in (1, 2, 3):
        explicit = x.subs(d, dim).doit()
        reference = explicit.replace(lambda e: isinstance(e, E),
                                     lambda e, dim=dim: brute_force_expectation(e.args[0], model,
                                                                                dim))
        assert sp.simplify(engine.subs(d, dim) - reference) == 0


def test_a_delta_against_an_index_that_some_dimensions_lack_is_not_evaluated(normal):
    """sum_{i <= d} delta_{i5} is 1 for d >= 5 and 0 below: no one closed form for every d."""
    from sdpa_proofs.errors import UnsupportedExpression

    with pytest.raises(UnsupportedExpression):
        ExactEvaluator(normal).value(Sum(sp.KroneckerDelta(i, 5) * E(q[i] ** 2), (i, 1, d)))
    c = sp.Symbol("c", integer=True)  # 0 or below for all it says: sum_i delta(i, 0) is 0
    with pytest.raises(UnsupportedExpression):
        ExactEvaluator(normal).value(Sum(sp.KroneckerDelta(i, c), (i, 1, d)))


def test_fourth_moment_of_the_dot_product_from_cumulants():
    """E[S^4] = d E[X^4] + 3 d(d-1) E[X^2]^2 for X = q_i k_i (textbook, Normal coordinates)."""
    normal = INDEPENDENT[0]
    x2 = sigma_q**2 * sigma_k**2
    x4 = NORMAL_MOMENTS[4] ** 2 * x2**2
    expected = d * x4 + 3 * d * (d - 1) * x2**2
    assert sp.expand(ExactEvaluator(normal).value(E(S**4)) - expected) == 0


def test_variance_against_sympy_stats_at_small_d():
    """sympy.stats (slow, fixed d) as an outside reference for the Normal model."""
    from sympy.stats import Normal, variance

    a, b = Rational(3, 7), Rational(5, 4)
    qs = [Normal(f"q{n}", 0, a) for n in range(2)]
    ks = [Normal(f"k{n}", 0, b) for n in range(2)]
    reference = variance(qs[0] * ks[0] + qs[1] * ks[1])
    engine = ExactEvaluator(INDEPENDENT[0]).value(Var(S))
    assert sp.simplify(engine.subs({d: 2, sigma_q: a, sigma_k: b}) - reference) == 0


def test_coincidence_counts_add_up_to_all_index_tuples():
    for n_indices in range(1, 5):
        indices = sp.symbols(f"a0:{n_indices}")
        total = sum(count for _, count in coincidence_patterns(indices, frozenset(), {}, d))
        assert sp.expand(total - d**n_indices) == 0
    pair = frozenset({frozenset(indices[:2])})
    constrained = sum(count for _, count in coincidence_patterns(indices[:2], pair, {}, d))
    assert sp.expand(constrained - d * (d - 1)) == 0


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_quadrature_rules_against_plain_quad(family):
    """Each family's exact rule against mpmath.quad over the family's own density."""
    mpmath.mp.dps = 40
    sigma = mpmath.mpf(3) / 7
    densities = {
        "Normal": (lambda x: mpmath.npdf(x, 0, sigma), [-mpmath.inf, 0, mpmath.inf]),
        "Uniform": (lambda x: 1 / (2 * mpmath.sqrt(3) * sigma),
                    [-mpmath.sqrt(3) * sigma, mpmath.sqrt(3) * sigma]),
        "Laplace": (lambda x: mpmath.exp(-abs(x) * mpmath.sqrt(2) / sigma)
                    * mpmath.sqrt(2) / (2 * sigma), [-mpmath.inf, 0, mpmath.inf]),
    }
    with mpmath.workdps(40):
        for n in range(7):
            rule = family.rule(family.points_for_degree(n), sigma, 40)
            by_rule = sum(w * x**n for w, x in rule)
            exact = mpmath.mpf(sp.N(family.moment(n, Rational(3, 7)), 40))
            assert abs(by_rule - exact) < mpmath.mpf(10) ** -35
            if family.name in densities:
                density, interval = densities[family.name]
                by_quad = mpmath.quad(lambda x, n=n, f=density: x**n * f(x), interval)
                assert abs(by_quad - exact) < mpmath.mpf(10) ** -30 * max(1, abs(exact))
    mpmath.mp.dps = 15


def test_the_laplace_rule_is_a_gauss_rule_with_as_many_nodes_as_asked():
    """m nodes, exact for every degree below 2m (against E[X^n] = n! b^n) and not at 2m: the
    Gauss rule of the Laplace density, where two reflected Laguerre rules need 2m nodes."""
    from sdpa_proofs.distributions import LAPLACE

    with mpmath.workdps(40):
        for m in (1, 2, 3, 5, 8, 16):
            rule = LAPLACE.rule(m, mpmath.mpf(1), 40)
            assert len(rule) == m

            def error(n, rule=rule):
                exact = mpmath.mpf(sp.N(LAPLACE.moment(n, 1), 50))
                size = sum(w * abs(x) ** n for w, x in rule)  # odd moments: terms cancel
                difference = abs(sum(w * x**n for w, x in rule) - exact)
                return difference / max(size, exact) if difference else 0

            assert max(error(n) for n in range(2 * m)) < mpmath.mpf(10) ** -30
            assert error(2 * m) > mpmath.mpf(10) ** -3


def test_gauss_rules_from_moments_match_gauss_hermite():
    """Fed the moments of N(0, 1/2) (density e^(-x^2) / sqrt(pi)), the moment construction
    gives mpmath's Gauss-Hermite nodes, and weights divided by sqrt(pi)."""
    from sdpa_proofs.distributions import gauss_from_moments

    for size in (1, 4, 9):
        half_moments = [sp.factorial2(n - 1) / sp.Integer(2) ** (n // 2) if n % 2 == 0 else 0
                        for n in range(2 * size)]
        # the recurrence takes integers: moments of sqrt(2) X, scaled back below
        moments = [int(x * 2 ** (n // 2)) for n, x in enumerate(half_moments)]
        nodes, weights = gauss_from_moments(moments, size, 40)
        with mpmath.workdps(40):
            hermite_nodes, hermite_weights = mpmath.mp.gauss_quadrature(size, "hermite")
            for x, w, hx, hw in zip(nodes, weights, hermite_nodes, hermite_weights):
                assert abs(x / mpmath.sqrt(2) - hx) < mpmath.mpf(10) ** -35
                assert abs(w - hw / mpmath.sqrt(mpmath.pi)) < mpmath.mpf(10) ** -35


def test_two_dimensional_integration_against_plain_quad():
    """E[(q_1 k_1 + q_1^2)^2] under the Uniform model, tensor Gauss rule versus mpmath.quad."""
    uniform = INDEPENDENT[1]
    point = uniform.parameter_points[0]

    def integrand(x, y):
        return (x * y + x**2) ** 2

    with mpmath.workdps(30):
        a, b = (mpmath.sqrt(3) * mpmath.mpf(point[s].p) / point[s].q for s in (sigma_q, sigma_k))
        by_quad = mpmath.quad(lambda x, y: integrand(x, y) / (4 * a * b), [-a, a], [-b, b])
        by_rule, _ = uniform.integrate(integrand, [q[1], k[1]], {q[1]: 4, k[1]: 2}, point, 30)
        assert abs(by_quad - by_rule) < mpmath.mpf(10) ** -25 * abs(by_quad)


@mpmath.workdps(45)
def test_matching_digits():
    """Resolved values are compared with themselves: 10^-40 against 0 agrees in no digit (the
    precision was raised to see it, or it would have been set to 0 as noise)."""
    one, ten = mpmath.mpf(1), mpmath.mpf(10)
    assert matching_digits(one, one, 45) == 45
    assert 19 < matching_digits(one, one + ten ** -20, 45) < 21
    assert matching_digits(mpmath.mpf(0), ten ** -40, 45) == 0
    assert 0.2 < matching_digits(ten ** -40, 2 * ten ** -40, 45) < 0.4  # log10(2)


def test_numeric_check_needs_the_digits_it_is_asked_for(normal):
    """25 agreeing digits: undecided when 30 are asked for (never passed), a pass at 20; a
    difference in the third digit is a failure with a counterexample."""
    tiny = 1 + Rational(1, 10**25)
    short = numeric_check(Var(S), d * sigma_q**2 * sigma_k**2 * tiny, normal,
                          NumericSettings(digits=30))
    assert short.status == "undecided" and "30 required" in short.reason
    assert 24 < short.digits < 26
    assert numeric_check(Var(S), d * sigma_q**2 * sigma_k**2 * tiny, normal,
                         NumericSettings(digits=20)).status == "pass"
    off = numeric_check(Var(S), d * sigma_q**2 * sigma_k**2 * Rational(1001, 1000), normal,
                        NumericSettings(digits=30))
    assert off.status == "fail" and off.counterexample["d"] == 1


@pytest.mark.parametrize("engine", [exact_check, lambda a, b, model: numeric_check(
    a, b, model, NumericSettings())])
def test_a_claim_naming_q_2_is_about_the_dimensions_that_have_it(normal, engine):
    """E[S q_2 k_2] = sigma_q^2 sigma_k^2 for every d >= 2 (the term i = 2 of S alone has a
    mean); the numeric check evaluated it at d = 1 too, taking q_2 for a coordinate beyond S,
    and refused it there.  Both engines pass it, and refuse 2 sigma_q^2 sigma_k^2."""
    x = E(S * q[2] * k[2])
    assert engine(x, sigma_q**2 * sigma_k**2, normal).status == "pass"
    assert engine(x, 2 * sigma_q**2 * sigma_k**2, normal).status == "fail"


def test_the_dimension_compared_in_a_delta_is_the_dimension(normal):
    """The numeric check gave the d of δ(d, 2) values 1..dim of its own, beside sums up to
    dim (review round 82): δ(d, 2) E[q_9^2] = 0 holds at every d it evaluates (9, 10, 11).
    δ(d, 9) E[q_9^2] is sigma_q^2 at d = 9, and not 0, to both engines.  The exact engine takes
    the case d = 2 too, where q_9 is a coordinate of its own: it keeps refusing the first
    (a claim false at d = 2 under that reading passed through a lemma when it skipped it,
    review round 83)."""
    settings = NumericSettings()
    assert numeric_check(sp.KroneckerDelta(d, 2) * E(q[9] ** 2), 0, normal,
                         settings).status == "pass"
    for engine in (exact_check, lambda a, b, model: numeric_check(a, b, model, settings)):
        assert engine(sp.KroneckerDelta(d, 9) * E(q[9] ** 2), 0, normal).status == "fail"
    assert exact_check(sp.KroneckerDelta(d, 2) * E(q[9] ** 2), 0, normal).status == "fail"


def test_non_polynomial_integrand_is_undecided_never_passed(normal):
    verdict = numeric_check(E(Abs(q[1])), sigma_q * sp.sqrt(2 / sp.pi), normal, NumericSettings())
    assert verdict.status == "undecided"
    assert exact_check(E(Abs(q[1])), sigma_q * sp.sqrt(2 / sp.pi), normal).status == "undecided"


def test_sd_and_free_index_cases(normal):
    evaluator = ExactEvaluator(normal)
    assert sp.simplify(evaluator.value(SD(S)) - sigma_q * sigma_k * sp.sqrt(d)) == 0
    # E[q_i q_j] is sigma^2 when i = j and 0 otherwise: both cases are checked
    verdict = exact_check(E(q[i] * q[j]), 0, normal)
    assert verdict.status == "fail" and "i = j" in verdict.reason
    assert exact_check(E(q[i] * q[j]), 0, normal, frozenset({frozenset({i, j})})).status == "pass"


# -- property-based: random moment identities ------------------------------------------------

powers = st.tuples(st.integers(0, 2), st.integers(0, 2))


@st.composite
def random_sum_products(draw):
    """A product of one to three sums sum_i q_i^a k_i^b, possibly plus an off-diagonal sum."""
    factors = []
    for n, (a, b) in enumerate(draw(st.lists(powers, min_size=1, max_size=3))):
        index = sp.Symbol(f"r{n}", integer=True, positive=True)
        factors.append(Sum(q[index]**a * k[index]**b, (index, 1, d)))
    expr = sp.Mul(*factors)
    if draw(st.booleans()):
        expr += draw(st.integers(-3, 3)) * SumOverDistinct(q[i] * q[j] * k[i] * k[j], i, j, d)
    return expr


@settings(max_examples=25, deadline=None)
@given(random_sum_products(), st.sampled_from(range(len(INDEPENDENT))))
def test_random_identities_exact_engine_against_brute_force(x, model_index):
    model = INDEPENDENT[model_index]
    engine = ExactEvaluator(model).value(E(x))
    for dim in (2, 3):
        assert sp.simplify(engine.subs(d, dim) - brute_force_expectation(x, model, dim)) == 0


@settings(max_examples=10, deadline=None)
@given(random_sum_products(), st.integers(1, 5), st.integers(0, 1))
def test_random_identities_pass_and_their_perturbations_fail(x, numerator, shift_power):
    """exact value = E[x] is accepted by both checks; adding c * d^p * sigma terms is rejected."""
    normal = INDEPENDENT[0]
    exact = ExactEvaluator(normal).value(E(x))
    fast = NumericSettings(digits=30, dimensions=(2,))
    assert exact_check(E(x), exact, normal).status == "pass"
    assert numeric_check(E(x), exact, normal, fast).status == "pass"
    wrong = exact + Rational(numerator, 7) * d**shift_power * sigma_q**2
    assert exact_check(E(x), wrong, normal).status == "fail"
    assert numeric_check(E(x), wrong, normal, fast).status == "fail"


def test_brute_force_reference_is_itself_sound():
    """The reference above must see a difference when there is one (it is not a tautology)."""
    normal = INDEPENDENT[0]
    assert brute_force_expectation(S**2, normal, 2) == 2 * sigma_q**2 * sigma_k**2
    assert list(itertools.islice(coincidence_patterns((i,), frozenset(), {}, d), 5))


def test_exact_engine_refuses_coefficients_that_depend_on_the_index(normal):
    verdict = exact_check(E(Sum(i * q[i], (i, 1, d))), 0, normal)
    assert verdict.status == "undecided" and "summation index" in verdict.reason


def test_the_exact_search_decides_signs_by_proof_not_by_evalf():
    """log(cos(c z)), c = 10^-40, is -c^2 z^2 / 2 + O(c^4 z^4): below 0 wherever z != 0, and
    above -c^2 z^2 / 10^10.  SymPy's evalf makes it 0 at the exact points (z = 1/5: -2 10^-82
    by the series), and so refuted the true bound, and missed the counterexamples to
    log(cos(c z)) >= 0 and to log(cos(c z)) = 0 (undecided)."""
    from sdpa_proofs import z
    from sdpa_proofs.models import MODELS

    logits, c = MODELS["gaussian-logits"], Rational(1, 10**40)
    value = sp.log(sp.cos(c * z[1]))
    assert exact_check(value, -c**2 * z[1] ** 2 / 10**10, logits, frozenset(), "<=").status \
        == "pass"
    refuted = exact_check(value, 0, logits, frozenset(), ">=")
    assert refuted.status == "fail"
    at = Rational(refuted.counterexample["z[1]"])
    series = -(c * at) ** 2 / 2
    assert f"differ by {mpmath.nstr(mpmath.mpf(series), 2)}" in refuted.reason
    assert exact_check(value, 0, logits, frozenset(), "=").status == "fail"


@pytest.mark.parametrize("assumptions", [
    dict(integer=True, even=True), dict(integer=True, odd=True),
    dict(integer=True, even=True, positive=True), dict(integer=True, odd=True, negative=True),
    dict(integer=True, even=True, nonpositive=True), dict(integer=True, positive=True),
    dict(positive=True), dict(negative=True), dict(real=True),
])
def test_a_value_drawn_for_a_symbol_nothing_fixes_respects_its_assumptions(assumptions):
    """The checks try symbols that nothing fixes (a shift c) at seeded values; each value is
    checked against the declaration by plain integer and fraction arithmetic (an even symbol
    was given 7; review round 52)."""
    import random

    from sdpa_proofs.algebra import random_value

    rng = random.Random(20261201)
    holds = {"integer": lambda v: v.denominator == 1, "even": lambda v: v % 2 == 0,
             "odd": lambda v: v % 2 == 1, "positive": lambda v: v > 0,
             "negative": lambda v: v < 0, "nonpositive": lambda v: v <= 0,
             "real": lambda v: True}
    for _ in range(300):
        value = Fraction(str(random_value(sp.Symbol("c", **assumptions), rng)))
        assert all(holds[name](value) for name in assumptions), (assumptions, value)


@pytest.mark.parametrize("model_name", ["independent-normal", "gaussian"])
@pytest.mark.parametrize("lhs, holds", [
    # delta_{d5}(d - 5) is 0 at every d: the delta is 0 unless d = 5, where d - 5 is
    (sp.KroneckerDelta(d, 5) * (d - 5) * sigma_q, True),
    (sp.KroneckerDelta(d, 5) * (d - 4) * sigma_q, False),  # 1 sigma_q at d = 5
    (sp.KroneckerDelta(i, 5) * (i - 5) * E(q[i] ** 2), True),
    (sp.KroneckerDelta(i, 5) * (i - 6) * E(q[i] ** 2), False),  # -E[q_5^2] at i = 5
    (sp.KroneckerDelta(i, j) * (i - j) * E(q[i] * q[j]), True),
    (sp.KroneckerDelta(i, j) * (i + j) * E(q[i] * q[j]), False),  # 2i E[q_i^2] at i = j
])
def test_in_a_case_of_coinciding_indices_every_occurrence_takes_the_case(model_name, lhs,
                                                                        holds):
    """In the case i = 5 the engine writes i as 5 in the coefficients too, and in the case
    i = j writes both as one: the true claims are not refuted, and the false ones still
    are, in the case that makes them false."""
    from sdpa_proofs.models import MODELS
    verdict = exact_check(lhs, 0, MODELS[model_name])
    if holds:
        assert verdict.status == "pass", verdict.reason
    else:
        assert verdict.status == "fail" and " when " in verdict.reason, verdict.reason


def test_a_bound_with_a_free_scale_is_searched_at_values_of_the_scale():
    """c E[q_1^2] <= 0 holds for c < 0 and fails for c > 0: the counterexample search gave the
    scale no value and stayed undecided ('could not evaluate 9c/49', review round 85)."""
    from sdpa_proofs import get_model

    normal = get_model("independent-normal")
    for c, status in [(sp.Symbol("c", real=True), "fail"),
                      (sp.Symbol("c", negative=True), "pass")]:
        verdict = exact_check(c * E(q[1] ** 2), 0, normal, relation="<=")
        assert verdict.status == status, verdict
    refuted = exact_check(sp.Symbol("c", real=True) * E(q[1] ** 2), 0, normal, relation="<=")
    assert "c = " in refuted.reason


def test_an_integer_parameter_is_tried_at_its_smallest_values():
    """c E[q_1^2] >= 2 E[q_1^2] holds for every integer c >= 2 and fails at c = 1; integers
    were drawn from 5 to 40, so the numeric check and the exact search passed it."""
    from sdpa_proofs import get_model
    from sdpa_proofs.numeric import NumericSettings, numeric_check

    normal, c = get_model("independent-normal"), sp.Symbol("c", integer=True, positive=True)
    for bound, status in [(2, "fail"), (1, "pass")]:
        before, after = c * E(q[1] ** 2), bound * E(q[1] ** 2)
        verdict = numeric_check(before, after, normal, NumericSettings(), relation=">=")
        assert verdict.status == status, verdict
        assert exact_check(before, after, normal, relation=">=").status == status


def test_a_bound_the_numeric_check_finds_true_at_its_points_is_no_proof():
    """1 - sum p_i^2 <= 3/4 holds for n <= 4 and fails from n = 5: the numeric check passes it
    at n = 1, 2, 3 and must not call that conclusive (review round 88)."""
    from sdpa_proofs import get_model, n, p, softmax_abbreviations
    from sdpa_proofs.expressions import unfold
    from sdpa_proofs.numeric import NumericSettings, numeric_check

    logits = get_model("gaussian-logits")
    side = unfold(1 - Sum(p[i] ** 2, (i, 1, n)), softmax_abbreviations)
    verdict = numeric_check(side, Rational(3, 4), logits, NumericSettings(), relation="<=")
    assert verdict.status == "pass" and not verdict.conclusive
