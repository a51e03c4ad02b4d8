"""Var(S / d) = sigma_q^2 sigma_k^2 / d: dividing by d instead over-shrinks the logits, whose
variance then vanishes as d grows (the seed's "相比直接除以 d_k（会导致过度缩放）")."""

from sympy import Eq, Mul

from sdpa_proofs import Derivation, S, Step, Var, cite, d, dot_product, sigma_k, sigma_q

from variance import derivation as variance

derivation = Derivation(
    title="Scaling by 1/d over-shrinks: the variance falls like 1/d",
    claim=Eq(Var(S / d), sigma_q**2 * sigma_k**2 / d),
    where={S: dot_product},
    steps=[
        Step(Var(S) / d**2, "variance_scaling", "$Var(cX) = c^2 Var(X)$ with $c = 1/d$"),
        Step(Mul(d * sigma_q**2 * sigma_k**2, 1 / d**2, evaluate=False),  # as written
             cite(variance),
             "$Var(S) = d\\sigma_q^2\\sigma_k^2$, proved in variance"),
        Step(sigma_q**2 * sigma_k**2 / d, "algebra",
             "one factor $d$ cancels; the variance tends to $0$ as $d \\to \\infty$"),
    ],
    notes="As d grows the logits S/d concentrate at 0, so softmax(S/d) tends to the uniform "
          "distribution: attention stops discriminating between keys.",
)
