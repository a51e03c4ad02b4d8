"""sd(S) = sigma_q sigma_k sqrt(d): the spread of the logits grows like sqrt(d).

The seed's section "与 sqrt(d_k) 的关系".
"""

from sympy import Eq, sqrt

from sdpa_proofs import SD, Derivation, S, Step, Var, cite, d, dot_product, sigma_k, sigma_q

from variance import derivation as variance

derivation = Derivation(
    title="The standard deviation of the dot product is proportional to sqrt(d)",
    claim=Eq(SD(S), sigma_q * sigma_k * sqrt(d)),
    where={S: dot_product},
    steps=[
        Step(sqrt(Var(S)), "sd_definition", "the standard deviation is the root of the variance"),
        Step(sqrt(d * sigma_q**2 * sigma_k**2), cite(variance),
             "$Var(S) = d\\sigma_q^2\\sigma_k^2$, proved in variance"),
        Step(sigma_q * sigma_k * sqrt(d), "algebra",
             "$\\sigma_q, \\sigma_k > 0$, so the root splits; the factor in front does not "
             "depend on $d$"),
    ],
)
