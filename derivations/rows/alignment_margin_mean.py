"""The margin of the aligned key: E[l* - l] = d rho sigma_q sigma_k / c.

One key k* = k is aligned with the query (correlation rho per coordinate), another key k~ of the
row is independent (model aligned-key); the logits are l* = S / c and l = S~ / c.  The margin
grows like d / c: with c = sqrt(d) like sqrt(d) (the softmax finds the aligned key ever more
surely as d grows), with c = d it stays O(1).  This is the honest form of "1/d after training"
(muP, Tensor Programs V): it is alignment of one key against the others, not a correlation every
key shares, which softmax would ignore as a common shift.
"""

from sympy import Eq, Sum, Symbol

from sdpa_proofs import (Derivation, E, S, S_tilde, Step, d, dot_product, i, k, ktilde,
                         other_dot_product, q, rho, sigma_k, sigma_q)

c = Symbol("c", positive=True)  # the scale of the logits: 1, sqrt(d), d, ... (any c > 0)

derivation = Derivation(
    title="The aligned key's margin grows like d / c",
    claim=Eq(E((S - S_tilde) / c), d * rho * sigma_q * sigma_k / c),
    where={S: dot_product, S_tilde: other_dot_product},
    models=["aligned-key"],
    steps=[
        Step(Sum(E(q[i] * k[i]) - E(q[i] * ktilde[i]), (i, 1, d)) / c, "linearity",
             "expectation is linear"),
        Step(Sum(rho * sigma_q * sigma_k - 0, (i, 1, d)) / c, "isserlis",
             "$E[q_i k_i] = \\rho\\sigma_q\\sigma_k$; $\\tilde k$ is independent of $q$"),
        Step(d * rho * sigma_q * sigma_k / c, ["count_terms", "algebra"], "$d$ equal terms"),
    ],
)
