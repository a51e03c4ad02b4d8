"""At random initialisation the logit has mean zero: E[q . k] = 0 for q = W_Q x, k = W_K y.

This is the seed's "independence holds at random initialisation", one level down: the
coordinates of q and k are not given; they are made from a token by weight matrices whose
entries are drawn independently (Vaswani et al., footnote 4, assumes the independence this
derives).  Row i of W_Q and row i of W_K are independent, so E[q_i k_i] = E[q_i] E[k_i] = 0,
whatever the law of the entries and also when x = y (a token attending to itself).
"""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, S, Step, d, dot_product, i, k, q

derivation = Derivation(
    title="At initialisation q = W_Q x and k = W_K y give a logit of mean zero",
    claim=Eq(E(S), 0),
    where={S: dot_product},
    models=["init-normal", "init-uniform", "init-rademacher", "init-laplace",
            "init-same-token-normal", "init-same-token-uniform", "init-same-token-rademacher",
            "init-same-token-laplace"],
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity", "expectation is linear"),
        Step(Sum(E(q[i]) * E(k[i]), (i, 1, d)), "independence",
             "$q_i$ depends on row $i$ of $W_Q$ only, $k_i$ on row $i$ of $W_K$ only"),
        Step(0, "zero_mean", "the weights have mean zero, so $E[q_i] = \\sum_a x_a E[W_{ia}] = 0$"),
    ],
)
