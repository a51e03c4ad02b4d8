"""The rows of the softmax Jacobian sum to zero: sum_j dp_i/dz_j = 0.

Adding the same constant to every logit does not change the softmax, so no gradient flows along
(1, ..., 1): this is why a mean common to all logits (E[S] under correlated q, k) does not by
itself saturate attention; only the spread of the logits does.
"""

from sympy import Derivative, Eq, KroneckerDelta, Sum

from sdpa_proofs import Derivation, Step, cite, i, j, n, p, softmax_abbreviations, z

from jacobian import derivation as jacobian

derivation = Derivation(
    title="The rows of the softmax Jacobian sum to zero",
    claim=Eq(Sum(Derivative(p[i], z[j]), (j, 1, n)), 0),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        Step(Sum(p[i] * (KroneckerDelta(i, j) - p[j]), (j, 1, n)), cite(jacobian),
             "proved in jacobian"),
        Step(p[i] * Sum(KroneckerDelta(i, j), (j, 1, n))
             - p[i] * Sum(p[j], (j, 1, n)), "algebra", "linearity of the sum"),
        Step(p[i] - p[i] * Sum(p[j], (j, 1, n)), "sift",
             "$\\sum_j \\delta_{ij} = 1$"),
        Step(0, "algebra", "$\\sum_j p_j = 1$"),
    ],
)
