"""Every rule: a correct application passes, a wrong one is rejected with the reason named."""

import pytest
from sympy import Derivative, Eq, KroneckerDelta, Rational, Sum, exp, sqrt, sympify

from sdpa_proofs import (
    SD,
    Cov,
    E,
    Lim,
    MaxOver,
    S,
    SumOverDistinct,
    Var,
    d,
    dot_product,
    i,
    j,
    k,
    l,
    lemma,
    m,
    n,
    p_max,
    q,
    sigma_k,
    sigma_q,
    softmax_p,
    z,
)
from sdpa_proofs import s as s_logit
from sdpa_proofs.models import alpha, beta, get_model, mu_k, mu_q, rho
from sdpa_proofs.registry import RULES, UnknownRule, resolve
from sdpa_proofs.rulecheck import rule_check
from sdpa_proofs.runner import VerifySettings, establish_lemmas

DEFINITIONS = {S: dot_product}


def check(before, after, by, model, distinct=frozenset()):
    """The rule check of one step, its lemmas first established under the model, as the runner
    does."""
    rules = [r.unfolded(DEFINITIONS) for r in resolve(by)]
    establish_lemmas(rules, model, VerifySettings())
    return rule_check(sympify(before).xreplace(DEFINITIONS), sympify(after).xreplace(DEFINITIONS),
                      rules, model, distinct)


def s(body, *indices):
    return Sum(body, *((x, 1, d) for x in indices))


# (before, after, rule) that must pass, then a wrong variant that must fail
CASES = {
    "linearity": [
        (E(S), s(E(q[i] * k[i]), i), s(E(q[i] * k[i]), i) * 2),
        (E(3 * q[1] + sigma_q * k[2]), 3 * E(q[1]) + sigma_q * E(k[2]), 3 * E(q[1]) + E(k[2])),
    ],
    "independence": [
        (E(q[i] * k[i]), E(q[i]) * E(k[i]), E(q[i]) * E(k[i]) * 2),
        (E(q[i]**2 * k[i]**2), E(q[i]**2) * E(k[i]**2), E(q[i])**2 * E(k[i])**2),
    ],
    "zero_mean": [(s(E(q[i]) * E(k[i]), i), s(0, i), s(E(q[i]**2), i))],
    # a dropped term, and the variance of a sum taken as the sum's variance squared
    "variance_of_sum": [(Var(S), s(Var(q[i] * k[i]), i), s(Var(q[i] * k[i]), i) ** 2),
                        (Var(q[1] + k[2] + 3), Var(q[1]) + Var(k[2]), Var(q[1])),
                        # a constant shift adds nothing, and is not squared in
                        (Var(S + 7 * sigma_q), Var(S), Var(S) + 49 * sigma_q**2),
                        (Var(2 * S + E(q[1])), Var(2 * S), Var(S))],
    "model_variance": [(Var(q[1]) * Var(k[1]), sigma_q**2 * sigma_k**2,
                        sigma_q**4)],
    "second_moment": [(E(q[1]**2), Var(q[1]) + E(q[1])**2, Var(q[1]))],
    "variance_definition": [(Var(S), E((S - E(S))**2), E((S + E(S))**2))],
    "sd_definition": [(SD(S), sqrt(Var(S)), Var(S))],
    "variance_scaling": [(Var(S / sqrt(d)), Var(S) / d, Var(S) / sqrt(d)),
                         (Var(S / d), Var(S) / d**2, Var(S) / d),
                         # a constant that divides a difference, which expanding would scatter
                         (Var((S - s(q[i] * q[i], i)) / d), Var(S - s(q[i] * q[i], i)) / d**2,
                          Var(S - s(q[i] * q[i], i)) / d)],
    "expand_square": [(E(S**2), E(s(q[i] * k[i] * q[j] * k[j], j, i)),
                       E(s(q[i]**2 * k[i]**2, i)))],
    "split_diagonal": [(s(E(q[i] * k[i] * q[j] * k[j]), j, i),
                        s(E(q[i]**2 * k[i]**2), i)
                        + SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d),
                        SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d))],
    "count_terms": [(s(sigma_q**2, i), d * sigma_q**2, d**2 * sigma_q**2),
                    (SumOverDistinct(sigma_q, i, j, d), d * (d - 1) * sigma_q, d**2 * sigma_q),
                    (SumOverDistinct(sigma_q, i, j, d), d * (d - 1) * sigma_q,
                     (d - 1)**2 * sigma_q)],
    "algebra": [(sqrt(d * sigma_q**2 * sigma_k**2), sigma_q * sigma_k * sqrt(d),
                 sigma_q * sigma_k * d)],
    "covariance_definition": [(Cov(q[1], k[1]), E(q[1] * k[1]) - E(q[1]) * E(k[1]),
                               E(q[1] * k[1]))],
    "differentiate": [(Derivative(q[1]**3 * k[1], q[1]), 3 * q[1]**2 * k[1], q[1]**3)],
    "sift": [(Sum(KroneckerDelta(i, j) * q[j], (j, 1, d)), q[i], Sum(q[j], (j, 1, d))),
             # one index of a double sum against the other: the d terms i = j, not d^2
             (Sum(KroneckerDelta(i, j) * q[i] * k[j], (i, 1, d), (j, 1, d)),
              Sum(q[j] * k[j], (j, 1, d)), d * Sum(q[j] * k[j], (j, 1, d)))],
}

# Isserlis needs a Gaussian model: (model, before, right value, wrong value), the values derived
# by hand from the model's definition (E[X^2 Y^2] = sigma_X^2 sigma_Y^2 (1 + 2 rho^2), etc.)
DISTINCT_IJ = frozenset({frozenset({i, j})})
GAUSSIAN_CASES = {
    "isserlis": [
        ("independent-normal", E(q[1]**2 * k[1]**2), sigma_q**2 * sigma_k**2,
         3 * sigma_q**2 * sigma_k**2),
        ("correlated-normal", E(q[i]**2 * k[i]**2), sigma_q**2 * sigma_k**2 * (1 + 2 * rho**2),
         sigma_q**2 * sigma_k**2 * (1 + rho**2)),
        ("correlated-normal-means", E(q[i] * k[i]), rho * sigma_q * sigma_k + mu_q * mu_k,
         rho * sigma_q * sigma_k),
        ("shared-factor", E(q[i] * k[i] * q[j] * k[j]), 3 * alpha**2 * beta**2,
         2 * alpha**2 * beta**2),
        ("separate-factors", E(q[i] * k[i] * q[j] * k[j]), alpha**2 * beta**2, 0),
    ],
    # E[e^{tX}] = e^{t mu + t^2 sigma^2 / 2]: a forgotten t^2, a dropped mean
    "gaussian_mgf": [
        ("gaussian-logits", E(exp(2 * z[i])), exp(2 * s_logit**2), exp(s_logit**2)),
        ("correlated-normal-means", E(exp(q[1] + 1)), exp(1 + mu_q + sigma_q**2 / 2),
         exp(1 + sigma_q**2 / 2)),
    ],
    # the Gaussian fourth moment 3 sigma^4 where the law is uniform (9/5) or Laplace (4! b^4)
    "model_moment": [
        ("independent-uniform", E(q[1]**4), Rational(9, 5) * sigma_q**4, 3 * sigma_q**4),
        ("independent-laplace", E(q[1]**4), 6 * sigma_q**4, 3 * sigma_q**4),
        # Var(q_i k_i) = E[q_i^2 k_i^2] - E[q_i k_i]^2 = sigma^2 sigma^2 (1 + 2 rho^2 - rho^2);
        # its mean forgotten, or the variance taken for the second moment
        ("correlated-normal", Var(q[i] * k[i]), sigma_q**2 * sigma_k**2 * (1 + rho**2),
         sigma_q**2 * sigma_k**2 * (1 + 2 * rho**2)),
        ("independent-normal", Var(3 * q[1]**2), 18 * sigma_q**4, 27 * sigma_q**4),
        # Cov(X, Y) = E[X Y] - E[X] E[Y]: the means' product kept, Isserlis' factor 2 dropped
        ("correlated-normal-means", Cov(q[i], k[i]), rho * sigma_q * sigma_k,
         rho * sigma_q * sigma_k + mu_q * mu_k),
        ("correlated-normal", Cov(q[i]**2, k[i]**2), 2 * rho**2 * sigma_q**2 * sigma_k**2,
         rho**2 * sigma_q**2 * sigma_k**2),
        # a polynomial term by term: the cross term dropped, independence misapplied to it
        ("correlated-normal", E((q[i] - k[i])**2 + 1),
         sigma_q**2 + sigma_k**2 - 2 * rho * sigma_q * sigma_k + 1, sigma_q**2 + sigma_k**2 + 1),
        ("independent-normal", E((q[1] + k[1])**2), sigma_q**2 + sigma_k**2,
         (sigma_q + sigma_k)**2),
    ],
    # lim_n h(sample means) = h(means): a wrong power of a mean, independence slipped in
    "law_of_large_numbers": [
        ("gaussian-logits",
         Lim(n * Sum(exp(2 * z[i]), (i, 1, n)) / Sum(exp(z[i]), (i, 1, n))**2, n),
         E(exp(2 * z[1])) / E(exp(z[1]))**2, E(exp(2 * z[1])) / E(exp(z[1]))),
        ("correlated-normal", Lim(Sum(q[i] * k[i], (i, 1, d)) / d, d), E(q[1] * k[1]),
         E(q[1]) * E(k[1])),
    ],
    # E[X g(X)] = mu E[g] + sigma^2 E[g']: sigma for sigma^2, a dropped mean
    "stein": [
        ("gaussian-logits", E(z[i] * exp(z[i])), s_logit**2 * E(exp(z[i])),
         s_logit * E(exp(z[i]))),
        ("correlated-normal-means", E(q[1] * exp(q[1])),
         (mu_q + sigma_q**2) * E(exp(q[1])), sigma_q**2 * E(exp(q[1]))),
    ],
}


@pytest.mark.parametrize("rule", ["gaussian_mgf", "stein"])
def test_gaussian_identities_need_a_gaussian_model(rule):
    uniform = get_model("independent-uniform")
    before = E(q[1] * exp(q[1])) if rule == "stein" else E(exp(q[1]))
    after = sigma_q**2 * E(exp(q[1])) if rule == "stein" else exp(sigma_q**2 / 2)
    verdict = check(before, after, rule, uniform)
    assert verdict.status == "fail" and "not Gaussian" in verdict.reason


# Rules about softmax probabilities, under Gaussian logits: (before, right, relation, wrong).
P_I, SUM_SQUARES = softmax_p(i), Sum(softmax_p(i) ** 2, (i, 1, n))
LOGIT_CASES = {
    "at_most_max": [(P_I, p_max, "<=", MaxOver(softmax_p(l), (l, 1, n - 1))),
                     (1 - SUM_SQUARES, 1 - p_max * Sum(P_I, (i, 1, n)), ">=", 1 - p_max ** 2)],
    "sum_at_least_max": [(SUM_SQUARES, MaxOver(P_I ** 2, (i, 1, n)), ">=",
                          MaxOver(P_I, (i, 1, n)))],
    "range": [((1 - p_max) * (1 + p_max), 2 * (1 - p_max), "<=", 1 - p_max),
              (P_I, 0, ">=", Rational(1, 2))],
    "max_monotone": [(p_max ** 2, MaxOver(softmax_p(l) ** 2, (l, 1, n)), "=",
                      MaxOver(softmax_p(l) ** 3, (l, 1, n)))],
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_has_cases(rule):
    assert CASES.get(rule) or GAUSSIAN_CASES.get(rule) or LOGIT_CASES.get(rule), \
        f"rule {rule} has no accept/reject test"


@pytest.mark.parametrize("rule,case", [(r, c) for r, cs in LOGIT_CASES.items() for c in cs])
def test_logit_rule_accepts_correct_and_rejects_wrong(rule, case):
    before, good, relation, bad = case
    model = get_model("gaussian-logits")
    verdict = rule_check(before, good, resolve(rule), model, relation=relation)
    assert verdict.status == "pass", verdict.reason
    verdict = rule_check(before, bad, resolve(rule), model, relation=relation)
    assert verdict.status == "fail" and rule in verdict.reason


@pytest.mark.parametrize("rule,case", [(r, c) for r, cs in GAUSSIAN_CASES.items() for c in cs])
def test_gaussian_rule_accepts_correct_and_rejects_wrong(rule, case):
    name, before, good, bad = case
    model = get_model(name)
    assert check(before, good, rule, model, DISTINCT_IJ).status == "pass"
    verdict = check(before, bad, rule, model, DISTINCT_IJ)
    assert verdict.status == "fail" and rule in verdict.reason


def test_isserlis_needs_a_gaussian_model():
    uniform = get_model("independent-uniform")
    verdict = check(E(q[1]**2 * k[1]**2), sigma_q**2 * sigma_k**2, "isserlis", uniform)
    assert verdict.status == "fail" and "not jointly Gaussian" in verdict.reason


# indices that may coincide: Cov(q_i, q_j) = sigma_q^2 delta_ij for independent coordinates,
# rho sigma_q sigma_k delta_ij for q_i, k_j with per-coordinate correlation; (model, before,
# right, wrongs): independence misapplied (0), the indices taken as equal, a pairing dropped
DELTA = KroneckerDelta
PAIRINGS = DELTA(i, j) * DELTA(l, m) + DELTA(i, l) * DELTA(j, m) + DELTA(i, m) * DELTA(j, l)
COINCIDING = [
    ("independent-normal", E(q[i] * q[j]), sigma_q**2 * DELTA(i, j), [0, sigma_q**2]),
    ("correlated-normal", E(q[i] * k[j]), rho * sigma_q * sigma_k * DELTA(i, j),
     [0, rho * sigma_q * sigma_k]),
    ("independent-normal", E(q[i] * q[j] * q[l] * q[m]), sigma_q**4 * PAIRINGS,
     [sigma_q**4 * (PAIRINGS - DELTA(i, m) * DELTA(j, l)), sigma_q**2 * PAIRINGS,
      3 * sigma_q**4]),
]


@pytest.mark.parametrize("case", COINCIDING)
def test_isserlis_writes_a_covariance_of_indices_that_may_coincide_with_a_delta(case):
    name, before, good, wrongs = case
    model = get_model(name)
    assert check(before, good, "isserlis", model).status == "pass"
    for wrong in wrongs:
        verdict = check(before, wrong, "isserlis", model)
        assert verdict.status == "fail" and "isserlis" in verdict.reason, wrong


def test_indices_known_distinct_are_not_probed_where_they_coincide(normal):
    """sigma_q^2 delta_ij is 0 for i != j: a step that says so is not refuted by a probe at
    i = j, which the same step without i != j is."""
    step = (sigma_q**2 * DELTA(i, j) + E(q[1]), E(q[1]), "algebra", normal)
    assert check(*step, DISTINCT_IJ).status != "fail"
    assert check(*step).status == "fail"


def test_sifting_an_index_needs_its_range_and_the_other_index_in_it(normal):
    """sum_{j<=d+1} sum_{i<=d} delta_ij is d, not d + 1; sum_i sum_{j<=i} delta_ij has a
    range that depends on i: sift applies to neither."""
    wider = Sum(DELTA(i, j), (i, 1, d), (j, 1, d + 1))
    verdict = check(wider, Sum(1, (j, 1, d + 1)), "sift", normal)
    assert verdict.status == "fail" and "applies nowhere" in verdict.reason
    nested = Sum(DELTA(i, j), (j, 1, i), (i, 1, d))
    verdict = check(nested, Sum(1, (i, 1, d)), "sift", normal)
    assert verdict.status == "fail" and "applies nowhere" in verdict.reason


@pytest.mark.parametrize("rule,case", [(r, c) for r, cs in CASES.items() for c in cs])
def test_rule_accepts_correct_and_rejects_wrong(rule, case, model):
    before, good, bad = case
    assert check(before, good, rule, model).status == "pass"
    verdict = check(before, bad, rule, model)
    assert verdict.status == "fail"
    assert rule in verdict.reason


def test_algebra_cannot_do_probability(normal):
    """E and Var are opaque to algebra: linearity or independence cannot pass as algebra."""
    assert check(E(S), s(E(q[i] * k[i]), i), "algebra", normal).status == "fail"
    assert check(E(q[1] * k[1]), E(q[1]) * E(k[1]), "algebra", normal).status == "fail"
    assert check(E(q[1]) * (sigma_q - sigma_q), 0, "algebra", normal).status == "pass"


def test_a_rule_does_not_justify_another_rules_step(normal):
    assert check(E(q[1] * k[1]), E(q[1]) * E(k[1]), "linearity", normal).status == "fail"
    assert check(E(q[1] + k[1]), E(q[1]) + E(k[1]), "independence", normal).status == "fail"


def test_independence_needs_distinct_indices(normal):
    """Factorising E[q_i k_i q_j k_j] without i != j is the classic misapplication."""
    verdict = check(E(q[i] * k[i] * q[j] * k[j]), E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]),
                    "independence", normal)
    assert verdict.status == "fail"
    assert "i ≠ j is not known" in verdict.reason
    inside = check(SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d),
                   SumOverDistinct(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), i, j, d),
                   "independence", normal)
    assert inside.status == "pass"
    assumed = check(E(q[i] * q[j]), E(q[i]) * E(q[j]), "independence", normal,
                    frozenset({frozenset({i, j})}))
    assert assumed.status == "pass"


def test_independence_never_splits_a_variable_from_itself(normal):
    verdict = check(E(q[1]**2), E(q[1])**2, "independence", normal)
    assert verdict.status == "fail"


def test_lemma_rewrites_and_checks_its_premise(normal):
    mean_zero = lemma(Eq(E(S), 0))
    verdict = check(E((S - E(S))**2), E(S**2), mean_zero, normal)
    assert verdict.status == "pass"
    assert any("lemma" in a for a in verdict.assumes)  # the pass rests on the lemma, and says so
    wrong = lemma(Eq(E(S), sigma_q))
    verdict = check(E((S - E(S))**2), E((S - sigma_q)**2), wrong, normal)
    assert verdict.status == "fail"
    assert "does not hold under model" in verdict.reason


def test_several_rules_in_one_step(normal):
    before = E(s(q[i] * k[i] * q[j] * k[j], j, i))
    after = s(E(q[i]**2 * k[i]**2), i) + SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d)
    assert check(before, after, ["linearity", "split_diagonal"], normal).status == "pass"
    assert check(before, after, "linearity", normal).status == "fail"
    assert check(before, after, "split_diagonal", normal).status == "fail"


def test_unknown_rule_is_named():
    with pytest.raises(UnknownRule, match="linearty"):
        resolve("linearty")


def test_a_factor_that_depends_on_the_index_stays_inside_the_sum(normal):
    """sum_i i q_i is not i * sum_i q_i: bound indices are found by name, not only as subscripts."""
    assert check(E(s(i * q[i], i)), s(i * E(q[i]), i), "linearity", normal).status == "pass"
    assert check(s(i * sigma_q, i), i * s(sigma_q, i), "algebra", normal).status != "pass"


def test_counting_respects_limits_that_depend_on_other_indices(normal):
    triangle = Sum(sigma_q, (j, 1, i), (i, 1, d))  # sum_{i=1}^{d} sum_{j=1}^{i} sigma_q
    assert check(triangle, Sum(i * sigma_q, (i, 1, d)), "count_terms", normal).status == "pass"
    assert check(triangle, d * Sum(sigma_q, (j, 1, i)), "count_terms", normal).status == "fail"


def test_a_lemma_nobody_established_rewrites_nothing(normal):
    """The rule check never proves a lemma itself: unestablished, it is not used."""
    rules = [lemma(Eq(E(S), 0)).unfolded(DEFINITIONS)]
    verdict = rule_check(E((S - E(S))**2).xreplace(DEFINITIONS), E(S**2).xreplace(DEFINITIONS),
                         rules, normal)
    assert verdict.status == "fail" and "was not established" in verdict.reason


def test_a_lemma_about_generic_indices_must_hold_when_they_coincide(normal):
    """E[q_i q_j] = 0 only for i != j; cited without that, it must not rewrite anything."""
    verdict = check(s(E(q[i] * q[j]), i, j), s(0, i, j), lemma(Eq(E(q[i] * q[j]), 0)), normal)
    assert verdict.status == "fail"
    assert "does not hold" in verdict.reason


def test_algebra_does_not_assume_expectations_are_positive(normal):
    assert check(sqrt(E(q[1])**2), E(q[1]), "algebra", normal).status != "pass"
    assert check(sqrt(Var(q[1])**2), Var(q[1]), "algebra", normal).status == "pass"


def test_second_moment_whichever_way_sympy_writes_the_square(normal):
    """SymPy turns E[(S / sqrt(d))^2] into E[S^2 / d]; the rule still reads X = S / sqrt(d)."""
    t = dot_product / sqrt(d)
    assert check(Var(t), E(t**2) - E(t)**2, "second_moment", normal).status == "pass"
    assert check(Var(t), E(t**2), "second_moment", normal).status == "fail"
    assert check(E(q[1]**2 * k[1]**2), Var(q[1] * k[1]) + E(q[1] * k[1])**2, "second_moment",
                 normal).status == "pass"


def test_stein_needs_x_as_a_factor_with_a_positive_power():
    """E[e^z / z] is not s^2 E[(e^z / z^2)']: g = e^z / z^2 is not integrable at 0."""
    from sdpa_proofs.rules import Context, Stein

    model = get_model("gaussian-logits")
    assert Stein().rewrite(E(exp(z[1]) / z[1]), Context(model)) is None
    assert Stein().rewrite(E(z[1] ** 2 * exp(z[1])), Context(model)) is not None


def test_a_lemma_applies_whatever_the_index_letter():
    """Established for every i (the exact check covers every case of its free indices), a
    lemma stated with i rewrites E[q_j k_j] and E[q_2 k_2]; E[q_j k_i] is another quantity."""
    model = get_model("correlated-normal")
    cross = lemma(Eq(E(q[i] * k[i]), rho * sigma_q * sigma_k), "cross")
    establish_lemmas([cross], model, VerifySettings())
    for node in (E(q[j] * k[j]), E(q[2] * k[2])):
        assert rule_check(node, rho * sigma_q * sigma_k, [cross], model).passed
    assert rule_check(s(E(q[j] * k[j]), j), s(rho * sigma_q * sigma_k, j), [cross],
                      model).passed
    assert rule_check(E(q[j] * k[i]), rho * sigma_q * sigma_k, [cross], model).status == "fail"


def test_renaming_cannot_turn_a_lemma_true_only_for_distinct_indices_into_a_rule():
    """E[q_i q_j] = 0 holds for i != j only, so it is not established (the case i = j fails)
    and no renaming applies it, not even to E[q_1 q_2] where it would be right."""
    model = get_model("independent-normal")
    orthogonal = lemma(Eq(E(q[i] * q[j]), 0), "orthogonal")
    establish_lemmas([orthogonal], model, VerifySettings())
    verdict = rule_check(E(q[1] * q[2]), 0, [orthogonal], model)
    assert verdict.status == "fail" and "does not hold" in verdict.reason



@pytest.mark.parametrize("name, before, after, why", [
    ("shared-factor", Var(S), s(Var(q[i] * k[i]), i), "the shared factor z"),
    ("correlated-normal", Var(q[1] + k[1]), Var(q[1]) + Var(k[1]), "latent u_1"),
    ("independent-normal", Var(s(q[i] * q[1], i)), s(Var(q[i] * q[1]), i),
     "q_1 appears in both, and a coordinate is not independent of itself"),
    ("independent-normal", Var(s(q[i] * q[j], i)), s(Var(q[i] * q[j]), i),
     "q_i and q_j may be the same coordinate"),
])
def test_the_variance_of_a_sum_needs_independent_terms(name, before, after, why):
    """Misapplied independence: the rule refuses and names the dependence."""
    verdict = check(before, after, "variance_of_sum", get_model(name))
    assert verdict.status == "fail" and "variance_of_sum" in verdict.reason
    assert why in verdict.reason, verdict.reason



def test_model_moments_of_correlated_pairs():
    """E[q_i k_i] = rho sigma_q sigma_k and E[q_i^2 k_i^2] = sigma_q^2 sigma_k^2 (1 + 2 rho^2)
    (Isserlis by hand); 1 + rho^2 is rejected; a product over two indices is not one moment."""
    model = get_model("correlated-normal")
    assert check(E(q[i] * k[i]), rho * sigma_q * sigma_k, "model_moment", model).passed
    good = sigma_q**2 * sigma_k**2 * (1 + 2 * rho**2)
    assert check(E(q[i]**2 * k[i]**2), good, "model_moment", model).passed
    wrong = check(E(q[i]**2 * k[i]**2), sigma_q**2 * sigma_k**2 * (1 + rho**2), "model_moment",
                  model)
    assert wrong.status == "fail"
    assert check(E(q[i] * k[j]), 0, "model_moment", model).status == "fail"
    assert check(Cov(q[i], k[j]), 0, "model_moment", model).status == "fail"  # two indices
    assert check(Cov(q[i], 3), 0, "model_moment", model).passed  # a constant varies with none
    assert check(Cov(q[i], 3), 1, "model_moment", model).status == "fail"
    assert check(E(q[i] * k[i] + q[i] * k[j]), rho * sigma_q * sigma_k, "model_moment",
                 model).status == "fail"  # one term of two indices: no moment of the model


def test_a_model_moment_inside_a_sum_over_distinct_pairs_is_taken_and_counted():
    """Sum_{i != j} E[q_i k_i] = d (d - 1) rho sigma_q sigma_k under correlated-normal (the
    pair's cross moment, d (d - 1) ordered pairs); it crashed the rule check (round 21), and
    d^2 pairs is refuted."""
    from sdpa_proofs import (
        Derivation,
        E,
        Step,
        SumOverDistinct,
        VerifySettings,
        d,
        i,
        j,
        k,
        q,
        rho,
        sigma_k,
        sigma_q,
    )

    def counted(pairs):
        return Derivation(claim=Eq(SumOverDistinct(E(q[i] * k[i]), i, j, d),
                                   pairs * rho * sigma_q * sigma_k),
                          models=["correlated-normal"], name="pairs",
                          steps=[Step(SumOverDistinct(rho * sigma_q * sigma_k, i, j, d),
                                      "model_moment"),
                                 Step(pairs * rho * sigma_q * sigma_k, "count_terms")])

    fast = VerifySettings(monte_carlo=False)
    assert counted(d * (d - 1)).verify(fast).status == "verified"
    wrong = counted(d**2).verify(fast)
    assert wrong.status == "failed" and {s.index for s in wrong.models[0].steps
                                         if s.rule_check.status == "fail"} == {2}


def test_a_random_term_is_no_constant_shift_of_a_variance():
    """Var(X + c) = Var(X) drops only what is deterministic: q_1 beside S is random (and S
    holds it), so Var(S + q_1) is not Var(S)."""
    verdict = check(Var(S + q[1]), Var(S), "variance_of_sum", get_model("independent-normal"))
    assert verdict.status == "fail" and "variance_of_sum" in verdict.reason


def test_a_rule_that_applies_nowhere_says_why():
    """'model_moment turns the previous expression into E[q_1 k_2]' showed the expression
    unchanged and no reason (review round 86): the rule now says it applies nowhere, and why
    where it knows (a vector without a law, coordinates of two indices, a dependence)."""
    from sdpa_proofs import ktilde, other_dot_product

    normal = get_model("independent-normal")
    lawless = check(E(q[1]**2 * (k[1] - ktilde[1])**2), 0, "model_moment", normal)
    assert lawless.status == "fail" and "applies nowhere" in lawless.reason
    assert "gives k̃ no law" in lawless.reason
    mixed = check(E(q[1] * k[2]), 0, "model_moment", normal)
    assert "several indices; independence or isserlis splits it first" in mixed.reason
    shared = check(Var(S - other_dot_product), Var(S) + Var(other_dot_product),
                   "variance_of_sum", get_model("aligned-key"))
    assert "applies nowhere" in shared.reason and "dependent" in shared.reason
