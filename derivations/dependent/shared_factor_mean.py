"""E[S] = d alpha beta when q and k load on one shared factor z."""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, S, Step, alpha, beta, d, dot_product, i, k, q

derivation = Derivation(
    title="A shared factor gives the dot product a mean of order d",
    claim=Eq(E(S), d * alpha * beta),
    where={S: dot_product},
    models=["shared-factor"],
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity", "expectation is linear"),
        Step(Sum(alpha * beta, (i, 1, d)), "isserlis",
             "$Cov(q_i, k_i) = \\alpha\\beta\\,Var(z)$"),
        Step(d * alpha * beta, "count_terms", "$d$ equal terms"),
    ],
)
