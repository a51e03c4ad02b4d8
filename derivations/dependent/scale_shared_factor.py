"""Which scale keeps the logits O(1) under a shared factor: S / d.

Var(S / d) = 2 alpha^2 beta^2 + (alpha^2 sigma_k^2 + beta^2 sigma_q^2 + sigma_q^2 sigma_k^2) / d
tends to 2 alpha^2 beta^2, whereas Var(S / sqrt(d)) = 2 alpha^2 beta^2 d + ... grows like d.
"""

from _shared import LINEAR
from sympy import Eq

from sdpa_proofs import Derivation, S, Step, Var, alpha, beta, cite, d, dot_product

from shared_factor_variance import derivation as shared_factor_variance

variance = 2 * alpha**2 * beta**2 * d**2 + d * LINEAR

derivation = Derivation(
    title="Under a shared factor, S/d keeps the logits of order one",
    claim=Eq(Var(S / d), 2 * alpha**2 * beta**2 + LINEAR / d),
    where={S: dot_product},
    models=["shared-factor"],
    steps=[
        Step(Var(S) / d**2, "variance_scaling", "$Var(cX) = c^2 Var(X)$ with $c = 1/d$"),
        Step(variance / d**2, cite(shared_factor_variance),
             "proved in shared_factor_variance"),
        Step(2 * alpha**2 * beta**2 + LINEAR / d, "algebra",
             "bounded in $d$; tends to $2\\alpha^2\\beta^2$"),
    ],
)
