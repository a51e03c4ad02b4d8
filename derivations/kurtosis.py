"""The kurtosis of the dot product: E[S^4] / Var(S)^2 = 3 + 6/d for Gaussian q, k, which tends
to 3, the kurtosis of a Gaussian.

Dividing by sqrt(d) fixes the variance of the logits (scaled_variance); this says more of their
law: S / sqrt(d) is no Gaussian at small d (a product of two Gaussians has kurtosis 9, and d = 1
gives 3 + 6 = 9), but its tails approach a Gaussian's like 6/d.  The mean is 0 (mean_zero), so
E[S^4] / Var(S)^2 is the kurtosis itself.
"""

from sympy import Eq, Mul

from sdpa_proofs import Derivation, E, S, Step, Var, cite, d, dot_product, sigma_k, sigma_q

from fourth_moment import derivation as fourth_moment
from variance import derivation as variance

derivation = Derivation(
    title="The kurtosis of S is 3 + 6/d: the logits' tails approach a Gaussian's",
    claim=Eq(E(S**4) / Var(S)**2, 3 + 6 / d),
    where={S: dot_product},
    models=["independent-normal"],
    steps=[
        Step(Mul(3 * d * (d + 2) * sigma_q**4 * sigma_k**4, 1 / Var(S)**2, evaluate=False),
             cite(fourth_moment), "$E[S^4] = 3d(d + 2)\\sigma_q^4\\sigma_k^4$, proved in "
             "fourth_moment"),
        Step(Mul(3 * d * (d + 2) * sigma_q**4 * sigma_k**4, 1 / (d * sigma_q**2 * sigma_k**2)**2,
                 evaluate=False),
             cite(variance), "$Var(S) = d\\sigma_q^2\\sigma_k^2$, proved in variance"),
        Step(3 + 6 / d, "algebra", "$\\sigma_q^4\\sigma_k^4$ cancels, and $d^2$ with it"),
    ],
)
