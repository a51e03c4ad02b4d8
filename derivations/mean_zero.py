"""E[S] = 0: the dot product of independent zero-mean vectors is centred.

The seed's section "期望 E[S]": linearity, independence of q_i and k_i, zero means.
"""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, S, Step, d, dot_product, i, k, q

derivation = Derivation(
    title="The dot product has mean zero",
    claim=Eq(E(S), 0),
    where={S: dot_product},
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity",
             "expectation is linear, so it passes through the sum"),
        Step(Sum(E(q[i]) * E(k[i]), (i, 1, d)), "independence",
             "$q_i$ and $k_i$ are independent"),
        Step(Sum(0, (i, 1, d)), "zero_mean", "every coordinate has mean zero"),
        Step(0, "count_terms", "$d$ terms, each $0$"),
    ],
)
