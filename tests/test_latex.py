"""The LaTeX printer writes what a mathematician writes; derivations render in Jupyter."""

from pathlib import Path

from sympy import Eq, Sum, sqrt

from sdpa_proofs import (
    SD,
    Derivation,
    E,
    Step,
    SumOverDistinct,
    Var,
    d,
    i,
    j,
    k,
    q,
    sigma_k,
    sigma_q,
)
from sdpa_proofs.latex import document, text, to_latex


def test_printer_notation():
    assert to_latex(E(q[i] * k[i])) == r"\mathbb{E}\left[{q}_{i} {k}_{i}\right]"
    assert to_latex(Var(q[1])) == r"\operatorname{Var}\mathopen{}\left({q}_{1}\right)"
    assert r"\operatorname{sd}" in to_latex(SD(q[1]))
    assert to_latex(SumOverDistinct(E(q[i] * q[j]), i, j, d)).startswith(r"\sum_{i \neq j}")
    assert to_latex(Sum(q[i] * k[j], (j, 1, d), (i, 1, d))).startswith(
        r"\sum_{i=1}^{d} \sum_{j=1}^{d}")
    assert to_latex(E(q[1])**2) == r"\mathbb{E}\left[{q}_{1}\right]^{2}"
    # reading order, not SymPy's alphabetical one
    assert to_latex(d * sigma_k**2 * sigma_q**2) == r"d \sigma_{q}^{2} \sigma_{k}^{2}"


def test_prose_is_escaped_but_math_passes_through():
    assert text("50% of $x_i$ & more") == r"50\% of $x_i$ \& more"


def test_document_and_jupyter_rendering():
    derivation = Derivation(claim=Eq(SD(q[1]), sigma_q),
                            steps=[Step(sqrt(Var(q[1])), "sd_definition", "by definition"),
                                   Step(sigma_q, ["model_variance", "algebra"], "the model")],
                            models=["independent-normal"], title="sd of a coordinate")
    tex = document(derivation)
    assert tex.startswith(r"\documentclass") and tex.rstrip().endswith(r"\end{document}")
    assert r"\begin{align*}" in tex and r"\tag{2}" in tex
    assert r"\item[(1)] definition of standard deviation: by definition" in tex
    assert r"\mathcal{N}(0, \sigma_{q}^2)" in tex
    jupyter = derivation._repr_latex_()
    assert jupyter.startswith("$$") and r"\begin{alignedat}{2}" in jupyter
    assert "sigma_k" not in tex and sigma_k.name not in jupyter


def test_a_sum_or_derivative_before_another_factor_is_bracketed():
    """As in the text form: the LaTeX must not let a sum or derivative reach over a factor."""
    from sympy import Derivative

    from sdpa_proofs import z

    assert to_latex(Derivative(z[1]**2, z[1]) * z[1]).startswith(r"\left(\frac{\partial}")
    assert to_latex(SumOverDistinct(q[i] * q[j], i, j, d) * k[1]).startswith(
        r"\left(\sum_{i \neq j}")
    assert to_latex(d * Sum(q[i], (i, 1, d))) == r"d \sum_{i=1}^{d} {q}_{i}"


def test_terms_subtracted_print_last_and_a_reason_that_repeats_its_rule_is_said_once():
    """E[S^2] - E[S]^2 and d (d - 1), as written by hand; no 'definition of variance:
    definition of variance'."""
    from sdpa_proofs import E, S, d
    from sdpa_proofs.latex import to_latex

    assert to_latex(E(S**2) - E(S)**2).index("S^{2}") < to_latex(E(S**2) - E(S)**2).index("-")
    assert "d - 1" in to_latex(d * (d - 1))
    derivation = Derivation(claim=Eq(SD(q[1]), sigma_q),
                            steps=[Step(sqrt(Var(q[1])), "sd_definition",
                                        "definition of standard deviation"),
                                   Step(sigma_q, ["model_variance", "algebra"])],
                            models=["independent-normal"])
    tex = document(derivation)
    assert tex.count("definition of standard deviation") == 1


def test_a_power_printed_as_a_fraction_keeps_its_meaning():
    """SymPy's LaTeX printer sends a power with a negative exponent through the product
    printer; reordering its arguments (d, -1) as factors printed 1/d as -d (review round 64).
    With a single factor there is nothing to order: SymPy's own printer is the reference."""
    import sympy as sp

    from sdpa_proofs import d, n

    for expr in (1 / d, 1 + 1 / d, sp.log(1 / n), sp.exp(1 / d), d**-2, 1 / sqrt(d)):
        assert to_latex(expr) == sp.latex(expr), expr


def test_a_user_rule_is_cited_as_the_users_not_as_a_derivation():
    """A user rule named mean_zero was cited "by mean_zero", as cite(mean_zero) is (review
    round 82)."""
    from sdpa_proofs import Rule, cite
    from sdpa_proofs.isolation import load_paths
    from sdpa_proofs.latex import rule_citation

    class MeanZero(Rule):
        name = "mean_zero"

        def rewrite(self, node, ctx):
            return None

    root = Path(__file__).resolve().parent.parent
    (mean_zero,) = load_paths([str(root / "derivations" / "mean_zero.py")])
    assert rule_citation(cite(mean_zero)) == "by mean\\_zero"
    assert rule_citation(MeanZero()) == "by the user's rule mean\\_zero"


def test_a_limit_before_another_term_is_bracketed_in_both_forms():
    """lim X_n + Σ_{i≤n} E[z_i²] (true: s² + n s²) printed as "lim_{n→∞} X_n + (Σ ...)",
    which reads as the limit of the whole sum, infinite (review round 85)."""
    from sdpa_proofs import E, Lim, n, z
    from sdpa_proofs.text import show

    limit = Lim(Sum(z[i]**2, (i, 1, n)) / n, n)
    both = limit + Sum(E(z[i]**2), (i, 1, n))
    assert show(both).startswith("(lim_{n→∞} (Σ_{i=1..n} z_i²)/n) + ")
    assert to_latex(both).startswith(r"\left(\lim_{n \to \infty}")
    assert show(limit) == "lim_{n→∞} (Σ_{i=1..n} z_i²)/n"  # alone, no brackets
