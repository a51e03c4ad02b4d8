"""A corpus of wrong derivations: each must be rejected at the step that is wrong, with a reason
(and, where the values differ, a numerical counterexample); the correct variant must verify."""

from pathlib import Path

import pytest
from sympy import (
    Abs,
    Eq,
    Integer,
    Le,
    Max,
    Rational,
    Sum,
    Symbol,
    binomial,
    ceiling,
    exp,
    factorial,
    floor,
    log,
    sign,
    sqrt,
)

from sdpa_proofs import (
    Derivation,
    E,
    S,
    Step,
    SumOverDistinct,
    Var,
    d,
    dot_product,
    i,
    j,
    k,
    n,
    q,
    sigma_k,
    sigma_q,
    verify_derivation,
)
from sdpa_proofs.isolation import load_file
from sdpa_proofs.runner import VerifySettings

FAST = VerifySettings(monte_carlo=False)
ROOT = Path(__file__).resolve().parent.parent
TWO_MODELS = ["independent-normal", "independent-laplace"]
VARIANCE = Eq(Var(S), d * sigma_q**2 * sigma_k**2)


def s(body, *indices):
    return Sum(body, *((x, 1, d) for x in reversed(indices)))


def seed_variance_steps():
    """The bundled derivation of Var(S) = d sigma_q^2 sigma_k^2, which follows the seed."""
    (bundled,) = load_file(ROOT / "derivations" / "variance.py")
    return list(bundled.steps)


def variance_with(step_number=None, step=None, claim=VARIANCE, models=None):
    steps = seed_variance_steps()
    if step_number is not None:
        steps[step_number - 1] = step
    kwargs = {"models": models} if models else {}
    return Derivation(claim=claim, steps=steps, where={S: dot_product}, name="variance", **kwargs)


def failures(report):
    """(model, step index, check) for every check that did not pass."""
    return [(m.model, st.index, label)
            for m in report.models for st in m.steps
            for label, v in (("rule", st.rule_check), ("exact", st.exact_check),
                             ("numeric", st.numeric_check)) if v.status != "pass"]


def test_seed_proof_verifies():
    report = verify_derivation(variance_with(), FAST)
    assert report.status == "verified", failures(report)


WRONG = {
    # the i = j terms dropped from the split
    "dropped diagonal": (4, Step(SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d),
                                 ["linearity", "split_diagonal"]), True),
    # sigma^4 where the model has sigma_q^2 sigma_k^2
    "sigma^4": (7, Step(s(sigma_q**4, i) + SumOverDistinct(0, i, j, d),
                        ["model_variance", "zero_mean"]), True),
    # d^2 diagonal terms instead of d
    "d^2 terms": (8, Step(d**2 * sigma_q**2 * sigma_k**2, "count_terms"), True),
    # sqrt(d) for d
    "sqrt(d) for d": (8, Step(sqrt(d) * sigma_q**2 * sigma_k**2, "count_terms"), True),
    # a sign error: (S + E[S])^2; true in value because E[S] = 0, so only the rule catches it
    "sign error": (1, Step(E((S + E(S))**2), "variance_definition"), False),
    # E[q_i^2 k_i^2] factorised as if it were E[q_i]^2 E[k_i]^2
    "wrong power": (5, Step(s(E(q[i])**2 * E(k[i])**2, i)
                            + SumOverDistinct(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), i, j, d),
                            "independence"), True),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_step_is_rejected_where_it_is_wrong(name):
    step_number, step, values_differ = WRONG[name]
    report = verify_derivation(variance_with(step_number, step, models=TWO_MODELS), FAST)
    assert report.status == "failed"
    found = failures(report)
    assert min(index for _, index, _ in found) == step_number
    assert ("independent-normal", step_number, "rule") in found
    model = report.models[0]
    if values_differ:
        numeric = model.steps[step_number - 1].numeric_check
        assert numeric.status == "fail"
        assert numeric.counterexample["lhs"] != numeric.counterexample["rhs"]
        assert "d" in numeric.counterexample
    else:
        assert model.steps[step_number - 1].numeric_check.status == "pass"


def test_off_by_one_count_of_off_diagonal_terms():
    """d^2 instead of d(d - 1) terms with i != j, in a sum whose off-diagonal does not vanish."""
    norm4 = E(s(q[i]**2, i)**2)
    good = Derivation(
        claim=Eq(norm4, s(E(q[i]**4), i) + d * (d - 1) * sigma_q**4),
        steps=[Step(E(s(q[i]**2 * q[j]**2, i, j)), "expand_square"),
               Step(s(E(q[i]**4), i) + SumOverDistinct(E(q[i]**2 * q[j]**2), i, j, d),
                    ["linearity", "split_diagonal"]),
               Step(s(E(q[i]**4), i) + SumOverDistinct(E(q[i]**2) * E(q[j]**2), i, j, d),
                    "independence"),
               Step(s(E(q[i]**4), i) + SumOverDistinct(
                   (Var(q[i]) + E(q[i])**2) * (Var(q[j]) + E(q[j])**2), i, j, d),
                   "second_moment"),
               Step(s(E(q[i]**4), i) + SumOverDistinct(sigma_q**4, i, j, d),
                    ["model_variance", "zero_mean"]),
               Step(s(E(q[i]**4), i) + d * (d - 1) * sigma_q**4, "count_terms")],
        name="norm4")
    assert verify_derivation(good, FAST).status == "verified"
    bad = Derivation(claim=Eq(norm4, s(E(q[i]**4), i) + d**2 * sigma_q**4),
                     steps=good.steps[:-1] + [Step(s(E(q[i]**4), i) + d**2 * sigma_q**4,
                                                   "count_terms")], name="norm4")
    report = verify_derivation(bad, FAST)
    assert report.status == "failed"
    assert {index for _, index, _ in failures(report)} == {6}
    assert report.models[0].steps[5].numeric_check.counterexample["d"] == 1


def test_factorising_without_distinct_indices_names_the_precondition():
    steps = seed_variance_steps()[:3] + [
        Step(s(E(q[i] * k[i] * q[j] * k[j]), i, j), "linearity"),
        Step(s(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), i, j), "independence"),
        Step(0, "zero_mean")]
    report = verify_derivation(Derivation(claim=Eq(Var(S), 0), steps=steps,
                                          where={S: dot_product}, name="v"), FAST)
    step5 = report.models[0].steps[4]
    assert step5.rule_check.status == "fail"
    assert "i ≠ j is not known" in step5.rule_check.reason
    assert step5.numeric_check.status == "fail"
    assert {index for _, index, _ in failures(report)} == {5}


def test_independence_where_the_model_has_none():
    """Under k = c q the seed's proof breaks exactly at E[S] = 0 and at factorising q_i, k_i."""
    report = verify_derivation(variance_with(models=["aligned-rademacher"]), FAST)
    assert report.status == "failed"
    broken = {index for _, index, _ in failures(report)}
    assert broken == {2, 5}
    step2, step5 = report.models[0].steps[1], report.models[0].steps[4]
    assert "cited mean_zero" in step2.rule_check.reason
    assert "dependent in this model" in step2.rule_check.reason
    assert "dependent in this model" in step5.rule_check.reason
    assert step5.numeric_check.counterexample is not None


def test_claim_that_the_chain_does_not_reach():
    report = verify_derivation(variance_with(claim=Eq(Var(S), d**2 * sigma_q**2 * sigma_k**2)),
                               FAST)
    assert report.status == "failed"
    assert all(m.conclusion.status == "fail" for m in report.models)
    assert "chain ends at" in report.models[0].conclusion.reason


def test_renaming_bound_indices_captures_no_index_free_in_an_inner_sum():
    """sum_i E[q_i^2 sum_j E[q_i q_j]] = d sigma^4 and sum_i E[q_i^2 sum_j E[q_j^2]] =
    d^2 sigma^4 differ only in the inner index of q_i: normalising each E's argument on its own
    named the inner j iota_0, and renaming the outer i iota_0 afterwards made the two equal, so
    'algebra' proved (d + 12) sigma^4 >= d^2 sigma^4 (false from d = 5; hostile review, round
    25).  Now the step is refused, by the rule check and the exact engine."""
    from sympy import Ge

    from sdpa_proofs.algebra import algebraically_equal

    inner_i = s(E(q[i] ** 2 * s(E(q[i] * q[j]), j)), i)
    inner_j = s(E(q[i] ** 2 * s(E(q[j] ** 2), j)), i)
    assert algebraically_equal(inner_i, inner_j) is not True
    derivation = Derivation(title="capture", claim=Ge(inner_i + 12 * sigma_q ** 4, inner_j),
                            steps=[Step(inner_j, "algebra", "same up to renaming", rel=">=")],
                            models=TWO_MODELS)
    report = verify_derivation(derivation, FAST)
    assert report.status == "failed"
    assert {(index, check) for _, index, check in failures(report)} >= {(1, "rule")}


def test_an_expectation_under_a_maximum_is_undecided_by_the_exact_engine_not_a_crash():
    from sympy import Symbol

    from sdpa_proofs import MaxOver

    l = Symbol("l", integer=True, positive=True)  # noqa: E741 - the index's usual name
    derivation = Derivation(title="max of expectations",
                            claim=Eq(MaxOver(E(q[l] ** 2), (l, 1, d)), sigma_q ** 2),
                            steps=[Step(MaxOver(sigma_q ** 2, (l, 1, d)), "model_moment"),
                                   Step(sigma_q ** 2, "algebra")], models=TWO_MODELS)
    report = verify_derivation(derivation, FAST)
    assert report.status in ("failed", "undecided")
    exact = report.models[0].steps[0].exact_check
    assert exact.status == "undecided" and "binds an index" in exact.reason


def test_a_limit_through_a_jump_of_a_power_is_not_the_law_of_large_numbers():
    """0^(M_n^2) is 0 for every n almost surely (the sample mean M_n of continuous logits is
    never 0), so its limit is 0; the law of large numbers with SymPy's 0^0 = 1 said 1
    (hostile review, round 26).  b^x jumps at x = 0 for b = 0: the base must be positive."""
    from sympy import Integer

    from sdpa_proofs import Lim, n, z

    body = Integer(0) ** ((Sum(z[i], (i, 1, n)) / n) ** 2)
    derivation = Derivation(title="a jump", claim=Eq(1, Lim(body, n)), models=["gaussian-logits"],
                            steps=[Step(Lim(body, n), ["law_of_large_numbers", "zero_mean"])])
    report = verify_derivation(derivation, FAST)
    assert report.status != "verified"
    step = report.models[0].steps[0]
    assert step.rule_check.status != "pass" and "positive" in step.rule_check.reason


def test_interval_arithmetic_treats_no_logarithm_of_a_negative_as_real():
    """exp(sum_m log(z_m + 1000)) is the product of the z_m + 1000, negative when an odd
    number of logits lie below -1000; 'e^x >= 0' held only if log of a negative were some
    real (hostile review, round 26)."""
    from sympy import Ge, exp, log

    from sdpa_proofs import m, n, z
    from sdpa_proofs.intervals import NOT_REAL, Ranges, enclosure

    claim = Ge(exp(Sum(log(z[m] + 1000), (m, 1, n))), 0)
    derivation = Derivation(title="exp of logs", claim=claim, models=["gaussian-logits"],
                            steps=[Step(0, "range", rel=">=")])
    assert verify_derivation(derivation, FAST).status == "failed"
    ranges = Ranges(n)
    assert enclosure(claim.lhs, ranges) == NOT_REAL
    assert enclosure(log(Sum(i - n, (i, 1, n))) ** 2, ranges) == NOT_REAL
    assert enclosure(exp(z[1]), ranges)[0] == 0  # a real exponent still gives e^x >= 0


def test_an_abbreviation_named_like_a_bound_index_is_refused():
    """where={t: w} with t a summation index: unfolding renamed the bound t to w and captured
    the summand's free w, checking sum_w E[q_w^2] = d sigma^2 while the output showed
    sum_t E[q_t q_w] (hostile review, round 26)."""
    from sympy import Integer, Symbol

    from sdpa_proofs.errors import BadInput
    from sdpa_proofs.models import get_model
    from sdpa_proofs.validation import validate

    t, w = (Symbol(x, integer=True, positive=True) for x in "tw")
    for meaning in (w, Integer(2)):
        derivation = Derivation(title="rebinding", claim=Eq(Sum(E(q[t] * q[w]), (t, 1, d)),
                                                             d * sigma_q ** 2),
                                where={t: meaning}, steps=[Step(d * sigma_q ** 2, "algebra")])
        with pytest.raises(BadInput, match="t is an index that a sum or maximum binds"):
            validate(derivation, [get_model("independent-normal")])


# 120 binomial(d, 5) (d - 5)! is d! only from d = 5 on: below, (d - 5)! has no value, and
# SymPy's simplify takes the difference to 0 all the same (its gamma identities ignore the
# poles); (d^2 - 25)/(d - 5) is d + 5 but at d = 5 (cancel).  Hostile review, round 62.
FACTORIAL_POLE = 120 * binomial(d, 5) * factorial(d - 5)
REMOVABLE_POLE = (d**2 - 25) / (d - 5)


FLOOR = floor(d / 5)  # 1 at d = 5..9
MIXED_SIGN = sign(4 * sigma_q - d * sigma_q)  # 0 at d = 4
SURD_SIGN = sign(d * sigma_q - 5 + 1 / (1 + sqrt(2)))
POSITIVE_SIGN = sign(d**2 - 2 * d + 1 + sigma_q)


@pytest.mark.parametrize("lhs, rhs", [
    (FACTORIAL_POLE, factorial(d)), (REMOVABLE_POLE, d + 5),
    # review round 63: what the part is taken of need not be a polynomial of integers alone
    ((sigma_q * d**2 - 25 * sigma_q) / (sigma_q * d - 5 * sigma_q), d + 5),  # d = 5
    ((d - 4) / (sqrt(d) - 2), sqrt(d) + 2),  # d = 4
    ((FLOOR**2 - 1) / (FLOOR - 1), FLOOR + 1),  # d = 5..9
    ((Abs(d - 5)**2 + Abs(d - 5)) / Abs(d - 5), Abs(d - 5) + 1),  # d = 5
    ((factorial(d)**2 - 14400) / (factorial(d) - 120), factorial(d) + 120),  # d = 5
    (binomial(7 - d, 5 - d), (7 - d) * (6 - d) / 2),  # 0 against 1 at d = 8
    ((d - 5)**(d - 4) / (d - 5), (d - 5)**(d - 5)),  # none against 0^0 = 1 at d = 5
    # review round 64: where a part lacks a value is told apart by kind, factor and binder
    ((5 - d)**(d * (d + 1) / 2) + (d + 1) * factorial(5 - d) - d * factorial(5 - d)
     - factorial(5 - d), (5 - d)**(d * (d + 1) / 2)),  # (-1)! against (-1)^21 at d = 6
    (((d**2 - 25) * q[1]**2 + d**2 - 25) / ((d - 5) * q[1]**2 + d - 5), d + 5),  # d = 5
    # review round 65: a constant that is 5 but not written as a rational, a factor that
    # mixes d and a parameter (0 at sigma_q = 1, d = 5)
    ((d**2 + Sum(-1, (j, 1, 5)) * d) / (d + Sum(-1, (j, 1, 5))), d),
    ((d + sqrt(2) - sqrt(27 + 10 * sqrt(2)) + 1) / (d + sqrt(2) - sqrt(27 + 10 * sqrt(2)))
     - 1 / (d + sqrt(2) - sqrt(27 + 10 * sqrt(2))), 1),
    ((sigma_q**2 * d**2 - 25) / (sigma_q * d - 5), sigma_q * d + 5),
    # review round 66: a factorial, logarithm or root of a polynomial in d and a parameter
    ((35 * sigma_q * d - 175 * sigma_q + 309) * factorial(35 * sigma_q * d - 175 * sigma_q + 308),
     factorial(35 * sigma_q * d - 175 * sigma_q + 309)),  # 0 (-1)! at sigma_q = 309/35, d = 4
    (1 + ((d + 1)**2 - d**2 - 2 * d - 1) * log(4 * sigma_q - d * sigma_q), 1),  # d >= 4
    ((sqrt(4 * sigma_q - d * sigma_q) - 1) * (sqrt(4 * sigma_q - d * sigma_q) + 1),
     4 * sigma_q - d * sigma_q - 1),  # no real root from d = 5 on
    # seventeenth session: mixtures of d and a parameter that are no polynomial, 0 where the
    # polynomials they are built from are (they had verified)
    ((MIXED_SIGN**2 + MIXED_SIGN) / MIXED_SIGN, MIXED_SIGN + 1),  # 0/0 at d = 4
    ((sigma_q**2 * FLOOR**2 - sigma_q**2) / (sigma_q * FLOOR - sigma_q),
     sigma_q * FLOOR + sigma_q),  # d = 5..9, the factor taken out of a sum
    ((d**2 - 16) / (d * sigma_q / (1 + sigma_q) - 4 * sigma_q / (1 + sigma_q)),
     (d + 4) * (1 + sigma_q) / sigma_q),  # d = 4, the numerator of a rational function
    ((Abs(sigma_q * d - 4 * sigma_q)**3 + 1) / Abs(sigma_q * d - 4 * sigma_q)**3
     - 1 / Abs(sigma_q * d - 4 * sigma_q)**3, 1),  # d = 4, under a power and |.|
] + [  # review round 68: each x is 0 at d = 5 (d = 4 for the root) at some admissible sigma
    ((x**2 + x) / x, x + 1) for x in (
        sigma_q * (d - 5) + sign(d - 5), sigma_q * (d - 5) + factorial(d) - 120,
        sqrt(d) - 2 + sigma_q * (d - 4), Max(d, sigma_q) - 5, floor(d * sigma_q) - 5,
        d**2 + d * exp(sigma_q) - 5 * exp(sigma_q) - 25, d**sigma_q - 5,
        d * sigma_q / (1 + sqrt(sigma_q)) - 5 * sigma_q / (1 + sqrt(sigma_q)) + d - 5,
        Sum(sigma_q + 1, (i, 1, d)) - 5 * sigma_q - 5,
        binomial(Rational(9, 2), d - Rational(1, 2)))  # 0 from d = 6 on (round 69)
] + [  # review round 70: a factorial of what moves with d through a logarithm, or with d and a
    # parameter: (-1)! at d = 21..54, and at d = 5 for sigma_q < 1
    (factorial(x + 1), (x + 1) * factorial(x)) for x in (
        (floor(log(d)) - 3)**2 - 1, (d - 5)**2 - 1 + floor(sigma_q))
] + [
    (factorial((floor(log(d)) - 3)**2 + 4),
     120 * binomial((floor(log(d)) - 3)**2 + 4, 5) * factorial((floor(log(d)) - 3)**2 - 1)),
])
def test_an_identity_that_fails_where_one_side_has_no_value_is_not_proven(lhs, rhs):
    """Neither the rule check nor the exact engine proves it (each names the part that has no
    value); the derivation is not verified."""
    derivation = Derivation(claim=Eq(lhs, rhs), steps=[Step(rhs, "algebra")],
                            models=["independent-normal"], name="pole")
    report = verify_derivation(derivation, FAST)
    assert report.status != "verified"
    (step,) = report.models[0].steps
    for verdict in (step.rule_check, step.exact_check):
        assert verdict.status == "undecided" and "has no value at some admissible value of" \
            in verdict.reason


def test_a_claim_whose_right_side_has_no_value_somewhere_is_not_reached_by_algebra():
    """d! = d (d - 1)! is proven; that it is 120 binomial(d, 5) (d - 5)! is not: the chain's
    end is compared with the claim as every step is (it had verified the false claim)."""
    derivation = Derivation(claim=Eq(factorial(d), FACTORIAL_POLE),
                            steps=[Step(d * factorial(d - 1), "algebra")],
                            models=["independent-normal"], name="pole")
    report = verify_derivation(derivation, FAST)
    assert report.status != "verified"
    assert report.models[0].conclusion.status == "undecided"
    assert "factorial(d - 5) has no value" in report.models[0].conclusion.reason


@pytest.mark.parametrize("lhs, rhs", [
    (d * factorial(d - 1), factorial(d)),  # (d - 1)! has a value at every d >= 1
    (binomial(d, 5) * 120, d * (d - 1) * (d - 2) * (d - 3) * (d - 4)),  # 0 = 0 below d = 5
    (2 * REMOVABLE_POLE, (2 * d**2 - 50) / (d - 5)),  # the same pole on both sides
    (k[1] / (d - 5), 2 * k[1] / (2 * d - 10)),  # no value at the same d, written apart
    (k[1] / (d**2 - 9 * d + 20), k[1] / ((d - 4) * (d - 5))),
    ((d**2 - 25) / (d - 5), (2 * d**2 - 50) / (2 * d - 10)),
    (1 / (d - 5)**2, 1 / (d**2 - 10 * d + 25)),
    ((d**3 - 2 * d) / (d**2 - 2), d),  # d^2 - 2 is 0 at no integer
] + [  # a mixture that is no polynomial and 0 at no admissible point: d sigma/(1 - sigma) + d
    # is d/(1 - sigma), exp(d sigma) is never 0, sign(2 d sigma - sigma) is 0 only at d = 1/2
    ((never_zero**2 + never_zero) / never_zero, never_zero + 1)
    for never_zero in (d * sigma_q / (1 - sigma_q) + d, exp(d * sigma_q),
                       sign(2 * d * sigma_q - sigma_q))
] + [  # review round 68: the same lack of a value on both sides, written apart; a base SymPy
    # cannot factor (1/(1 + sqrt 2) among its coefficients) counts whole, and no crash
    (k[1] / (sigma_q * FLOOR - sigma_q), -k[1] / (sigma_q - sigma_q * FLOOR)),
    (1 / SURD_SIGN + 1, (1 + SURD_SIGN) / SURD_SIGN),
    (1 / SURD_SIGN.args[0] + 1, (1 + SURD_SIGN.args[0]) / SURD_SIGN.args[0]),
    # 0 nowhere, as d = 1 + t and n = 1 + t show: (d - 1)^2 + sigma, n - 1 + e^sigma
    ((POSITIVE_SIGN**2 + POSITIVE_SIGN) / POSITIVE_SIGN, POSITIVE_SIGN + 1),
    (d / (n - 1 + exp(sigma_q)) + 1 / (n - 1 + exp(sigma_q)), (d + 1) / (n - 1 + exp(sigma_q))),
    (((d - exp(-sigma_q))**2 + d - exp(-sigma_q)) / (d - exp(-sigma_q)), d - exp(-sigma_q) + 1),
])
def test_identities_defined_wherever_their_other_side_is_are_still_proven(lhs, rhs):
    derivation = Derivation(claim=Eq(lhs, rhs), steps=[Step(rhs, "algebra")],
                            models=["independent-normal"], name="defined")
    (step,) = verify_derivation(derivation, FAST).models[0].steps
    assert step.rule_check.status == step.exact_check.status == "pass"


def test_the_parts_without_a_value_at_some_integer_are_those_of_the_integers_alone():
    """Each part below has no value at a d or n >= 1 named beside it, or a value at every one;
    parts of coordinates, moments, real parameters or inside a limit are the other checks'."""
    from sdpa_proofs import Lim, n, sigma_q, z
    from sdpa_proofs.algebra import pole_at_integers

    no_value = {1 / (d - 5): "d = 5", sqrt(d - 5): "d = 1", log(d - 1): "d = 1",
                factorial(d - 5): "d = 1", (n - 2) ** Rational(-3, 2): "n = 2",
                1 / (i - 2): "i = 2 in a sum from 1", 1 / (d - i): "i = d in a sum up to d"}
    for part, where in no_value.items():
        assert set(pole_at_integers(Sum(part, (i, 1, d)) + 1)) == {part}, where
    defined = [1 / d, sqrt(d), log(n), factorial(d - 1), binomial(d, 5), (d - 5) ** 2,
               1 / z[1], log(z[1] ** 2), 1 / E(q[1]), 1 / (sigma_q - 1), Lim(1 / log(n), n),
               Sum(1 / (i - 1), (i, 2, d)), Sum(1 / (d - i), (i, 1, d - 1)),
               Sum(factorial(d - i), (i, 1, d))]
    for part in defined:
        assert not pole_at_integers(part), part


def test_a_part_without_a_value_is_met_in_a_bound_a_limit_and_a_rule_s_rewriting():
    """The same parts through an inequality, inside a limit (n goes to infinity, d stays) and
    through what count_terms makes of a sum (review round 63): none is verified."""
    from sdpa_proofs import Lim, n, z

    count = Sum(1, (i, 1, d))
    row_mean = Sum(z[i], (i, 1, n)) / n
    derivations = [
        Derivation(claim=Le((FLOOR**2 - 1) / (FLOOR - 1), FLOOR + 1),
                   steps=[Step(FLOOR + 1, "algebra", rel="<=")], models=["independent-normal"]),
        Derivation(claim=Eq(Lim(row_mean + REMOVABLE_POLE, n), Lim(row_mean + d + 5, n)),
                   steps=[Step(Lim(row_mean + d + 5, n), "algebra")], models=["gaussian-logits"]),
        Derivation(claim=Eq(Lim(row_mean + (n * d**2 - 25 * n) / (n * d - 5 * n), n),
                            Lim(row_mean + d + 5, n)),
                   steps=[Step(Lim(row_mean + d + 5, n), "algebra")], models=["gaussian-logits"]),
        Derivation(claim=Eq((count**2 - 25) / (count - 5), d + 5),
                   steps=[Step(count + 5, "algebra"), Step(d + 5, "count_terms")],
                   models=["independent-normal"]),
    ]
    for n_, derivation in enumerate(derivations):
        derivation.name = f"pole_{n_}"
        report = verify_derivation(derivation, FAST)
        assert report.status != "verified", derivation.name
        first = report.models[0].steps[0]
        assert first.rule_check.status == first.exact_check.status == "undecided"


def test_a_free_index_does_not_share_the_lack_of_a_value_of_a_bound_one():
    """(i^2 - 25)/(i - 5) for a free i has no value at i = 5; a sum over i of 1/(i - 5) on the
    other side lacks one for every d >= 5, not where i = 5 (review round 64)."""
    from sdpa_proofs.algebra import unshared_pole

    bound = Sum(1 / (i - 5), (i, 1, d))
    assert unshared_pole((i**2 - 25) / (i - 5) - i + bound, 5 + bound) is not None
    assert unshared_pole(bound + 1, 2 * bound - bound + 1) is None


def test_a_denominator_with_a_large_constant_is_decided_at_once():
    """d^2 + d + N for a 59-digit N is 0 at no integer; its divisors would take factoring N
    (minutes): the factor is kept as one that may vanish, and both sides share it."""
    from sympy import nextprime

    from sdpa_proofs.algebra import unshared_pole

    denominator = d**2 + d + nextprime(10**29) * nextprime(7 * 10**29)
    assert unshared_pole(d / denominator + 1 / denominator, (d + 1) / denominator) is None


def test_a_maximum_or_a_sum_over_distinct_indices_binds_its_index_for_the_guard():
    """A free l - 1 has no value at l = 1; under MaxOver(., (l, 2, d + 1)) it always has one,
    and SumOverDistinct binds i and j alike: neither shares the free part's lack (review
    round 65)."""
    from sdpa_proofs import MaxOver
    from sdpa_proofs.algebra import unshared_pole

    m1 = MaxOver(i / (i - 1) + 1 / (i - 1), (i, 2, d + 1))
    m2 = MaxOver((i + 1) / (i - 1), (i, 2, d + 1))
    assert unshared_pole((i**2 - 1) / (i - 1) - i, 1 + m1 - m2) is not None
    s1 = SumOverDistinct(i / (i - j) + 1 / (i - j), i, j, d)
    s2 = SumOverDistinct((i + 1) / (i - j), i, j, d)
    assert unshared_pole((i**2 - j**2) / (i - j) - i - j, s1 - s2) is not None
    assert unshared_pole(m1 + 1, m1 + 2 - 1) is None  # the same bound part on both sides


def test_where_a_bound_part_lacks_a_value_depends_on_the_ranges_of_the_indices_it_runs_to():
    """1/(i - 5) over i <= j <= d meets i = 5 from d = 5 on; over i <= j <= min(d, 3) never:
    the two are not the same part (review round 66).  Plain numbers are taken as SymPy's."""
    from sympy import Min

    from sdpa_proofs.algebra import algebraically_equal, unshared_pole

    def nested(top):
        return Sum(Sum(1 / (i - 5), (i, 1, j)), (j, 1, top))
    assert unshared_pole(nested(d), nested(Min(d, 3))) is not None
    assert unshared_pole(nested(d) + 1, 1 + nested(d)) is None
    assert algebraically_equal(1, 1) is True and unshared_pole(0, 0) is None


def test_a_denominator_too_large_to_factor_counts_whole():
    """((d + sigma)/(d + 2 sigma))^300 - 2 took SymPy's together and factor_list minutes (review
    round 68): such a base is not factored, and counts as one that may be 0."""
    from sdpa_proofs.algebra import unshared_pole

    x = ((d + sigma_q) / (d + 2 * sigma_q))**300 - 2
    assert unshared_pole((x**2 + x) / x, x + 1) is not None
    assert unshared_pole(1 / x + 1, (1 + x) / x) is None


@pytest.mark.parametrize("rounding", [floor, ceiling])
def test_a_rounding_sympy_took_for_an_integer_is_not_dropped(rounding):
    """floor(2^(d - 1)(d - 1)(d - 2)(d - 3)/5) is 9 at d = 4, not 48/5: SymPy 1.14 held the
    argument written out an integer (it weighs only the twos of a denominator), and the floor
    vanished from the claim, which verified (review round 71)."""
    x = 2**(d - 1) * (d - 1) * (d - 2) * (d - 3) / 5
    derivation = Derivation(claim=Eq(rounding(x), x), steps=[Step(x, "algebra")],
                            models=["independent-normal"], name="rounding")
    assert verify_derivation(derivation, FAST).status != "verified"


def test_a_moment_in_a_denominator_is_weighed_in_its_closed_form():
    """d - 5 E[q_1^2]/sigma_q^2 is d - 5 under independent-normal: (x^2 + x)/x = x + 1 has no
    value at d = 5.  The rule check knows no model and leaves moments alone; the exact engine
    puts in their closed forms, and the step is not verified (review round 69)."""
    x = d - 5 * E(q[1]**2) / sigma_q**2
    derivation = Derivation(claim=Eq((x**2 + x) / x, x + 1), steps=[Step(x + 1, "algebra")],
                            models=["independent-normal"], name="moment")
    report = verify_derivation(derivation, FAST)
    assert report.status != "verified"
    exact = report.models[0].steps[0].exact_check
    assert exact.status == "undecided" and "1/(d - 5) has no value" in exact.reason


def test_a_sympy_failure_while_showing_a_factor_nonzero_counts_the_factor(monkeypatch):
    """d - e^(-sigma) is 0 nowhere ((t + w + t w)/(1 + w) for a count t >= 0 and w > 0), which
    the guard shows by expanding; where SymPy raises instead, nothing is shown and the
    denominator counts: the step is left to the other checks, never passed on a failed
    proof."""
    import sympy

    from sdpa_proofs import algebra

    denominator = d - exp(-sigma_q)
    lhs, rhs = (denominator**2 + denominator) / denominator, denominator + 1
    assert algebra.unshared_pole(lhs, rhs) is None

    def fails(*args, **kwargs):
        raise sympy.PolynomialError("an internal failure")
    monkeypatch.setattr(algebra.sp, "expand", fails)
    assert not algebra._never_zero(denominator)

@pytest.mark.parametrize("family_name, moment", [("UNIFORM", Rational(1, 9)),
                                                 ("LAPLACE", Integer(4))])
@pytest.mark.parametrize("wrong", [False, True])
def test_a_model_whose_sd_is_a_radical_is_reasoned_about_exactly(family_name, moment, wrong):
    """The sd of Uniform(-a, a) is a/sqrt(3), of Laplace(0, a) sqrt(2) a: Var(S) is
    d a^2 b^2/9, and d 4 a^2 b^2 (the moments a^2/3 and 2 a^2 by hand).  With sqrt(3) an
    unknown of its sign the model-moment step was undecided (a new user's review); as a root
    that knows its square it is shown, and a wrong constant (a^2 b^2, 2 a^2 b^2) is refuted
    there."""
    import sdpa_proofs
    from sdpa_proofs import independent

    family = getattr(sdpa_proofs, family_name)
    a, b = Symbol("a", positive=True), Symbol("b", positive=True)
    value = (moment * (9 if family_name == "UNIFORM" else Rational(1, 2))) if wrong else moment
    box = independent(family, family.sd_from(a), family.sd_from(b))
    derivation = Derivation(
        claim=Eq(Var(S), d * value * a**2 * b**2), where={S: dot_product}, models=[box],
        steps=[Step(s(Var(q[i] * k[i]), i), "variance_of_sum"),
               Step(s(E(q[i]**2 * k[i]**2) - E(q[i] * k[i])**2, i), "second_moment"),
               Step(s(value * a**2 * b**2, i), "model_moment"),
               Step(d * value * a**2 * b**2, "count_terms")], name="box")
    report = verify_derivation(derivation, FAST)
    if wrong:
        assert report.status == "failed"
        found = failures(report)
        assert min(index for _, index, _ in found) == 3
        assert {check for _, index, check in found if index == 3} == {"rule", "exact",
                                                                      "numeric"}
    else:
        assert report.status == "verified", failures(report)
