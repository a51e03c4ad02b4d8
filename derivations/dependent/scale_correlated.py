"""Which scale keeps the logits O(1) under per-coordinate correlation: S / d.

E[(S / d)^2] = rho^2 sigma_q^2 sigma_k^2 + sigma_q^2 sigma_k^2 (1 + rho^2) / d stays bounded,
whereas E[(S / sqrt(d))^2] = d rho^2 sigma_q^2 sigma_k^2 + sigma_q^2 sigma_k^2 (1 + rho^2) grows
like d: the mean of S / sqrt(d) is sqrt(d) rho sigma_q sigma_k.  This is a statement about the
size of one logit.  Softmax sees a row, and a correlation every key of the row shares with the
query is a common shift that it ignores: this is not muP's regime, which is one key aligned
against the others (derivations/rows/alignment_margin_*.py).
"""

from sympy import Eq

from sdpa_proofs import Derivation, E, S, Step, cite, d, dot_product, rho, sigma_k, sigma_q

from correlated_second_moment import derivation as correlated_second_moment

sigma2 = sigma_q**2 * sigma_k**2
second_moment = d * sigma2 * (1 + rho**2) + d**2 * rho**2 * sigma2

derivation = Derivation(
    title="Under per-coordinate correlation, S/d keeps the logits of order one",
    claim=Eq(E((S / d)**2), rho**2 * sigma2 + sigma2 * (1 + rho**2) / d),
    where={S: dot_product},
    models=["correlated-normal"],
    steps=[
        Step(E(S**2) / d**2, "linearity", "the constant $1/d^2$ comes out"),
        Step(second_moment / d**2, cite(correlated_second_moment),
             "proved in correlated_second_moment"),
        Step(rho**2 * sigma2 + sigma2 * (1 + rho**2) / d, "algebra",
             "bounded in $d$; tends to $\\rho^2\\sigma_q^2\\sigma_k^2$"),
    ],
)
