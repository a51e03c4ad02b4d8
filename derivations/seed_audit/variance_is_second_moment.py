"""Seed, dependence section: the argument keeps "Var(S) = E[S^2]" after dropping independence.

Refuted: Var(S) = E[S^2] needs E[S] = 0, and with correlated q_i, k_i the mean is
d rho sigma_q sigma_k.  The step that uses E[S] = 0 fails, with the lemma's true value.
"""

from sympy import Eq

from sdpa_proofs import Derivation, E, S, Step, Var, dot_product, lemma

derivation = Derivation(
    title="Seed audit: Var(S) = E[S^2] when q and k are dependent (refuted)",
    claim=Eq(Var(S), E(S**2)),
    where={S: dot_product},
    models=["correlated-normal", "shared-factor"],
    steps=[
        Step(E((S - E(S))**2), "variance_definition", "definition of variance"),
        Step(E(S**2), lemma(Eq(E(S), 0), "mean_zero"), "as in the independent case, $E[S] = 0$"),
    ],
    expect_refuted_at=2,
)
