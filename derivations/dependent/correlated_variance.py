"""Var(S) = d sigma_q^2 sigma_k^2 (1 + rho^2): per-coordinate correlation keeps the variance
linear in d.  The d^2 term of E[S^2] is exactly E[S]^2 and cancels (this refutes the seed's
"the cross terms make Var(S) proportional to d^2" for this kind of dependence)."""

from sympy import Eq

from sdpa_proofs import Derivation, E, S, Step, Var, cite, d, dot_product, rho, sigma_k, sigma_q

from correlated_mean import derivation as correlated_mean
from correlated_second_moment import derivation as correlated_second_moment

sigma2 = sigma_q**2 * sigma_k**2
second_moment = d * sigma2 * (1 + rho**2) + d**2 * rho**2 * sigma2
mean = d * rho * sigma_q * sigma_k

derivation = Derivation(
    title="With per-coordinate correlation the variance stays linear in d",
    claim=Eq(Var(S), d * sigma2 * (1 + rho**2)),
    where={S: dot_product},
    models=["correlated-normal"],
    steps=[
        Step(E(S**2) - E(S)**2, "second_moment", "$Var(X) = E[X^2] - E[X]^2$"),
        Step(second_moment - mean**2,
             [cite(correlated_second_moment), cite(correlated_mean)],
             "proved in correlated_second_moment and correlated_mean"),
        Step(d * sigma2 * (1 + rho**2), "algebra", "the $d^2$ terms cancel"),
    ],
)
