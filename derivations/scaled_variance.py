"""Var(S / sqrt(d)) = sigma_q^2 sigma_k^2: dividing by sqrt(d) makes the logit variance the same
for every d, which is the reason for the 1/sqrt(d_k) in softmax(QK^T / sqrt(d_k)) V."""

from sympy import Eq, Mul, sqrt

from sdpa_proofs import Derivation, S, Step, Var, cite, d, dot_product, sigma_k, sigma_q

from variance import derivation as variance

derivation = Derivation(
    title="Scaling by 1/sqrt(d) makes the variance independent of d",
    claim=Eq(Var(S / sqrt(d)), sigma_q**2 * sigma_k**2),
    where={S: dot_product},
    steps=[
        Step(Var(S) / d, "variance_scaling", "$Var(cX) = c^2 Var(X)$ with $c = 1/\\sqrt{d}$"),
        Step(Mul(d * sigma_q**2 * sigma_k**2, 1 / d, evaluate=False),  # as written: SymPy
             # would cancel d at once, and the next step would have nothing to cancel
             cite(variance),
             "$Var(S) = d\\sigma_q^2\\sigma_k^2$, proved in variance"),
        Step(sigma_q**2 * sigma_k**2, "algebra", "$d$ cancels: the same variance for every $d$"),
    ],
)
