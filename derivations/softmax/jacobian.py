"""The softmax Jacobian: dp_i/dz_j = p_i (delta_ij - p_j), i.e. J = diag(p) - p p^T.

Every gradient that reaches the logits is multiplied by J; its entries are products of
probabilities, so J vanishes as p approaches a one-hot vector (see docs/softmax-scaling.md).
"""

from sympy import Derivative, Eq, KroneckerDelta, Sum, exp

from sdpa_proofs import Derivation, Step, i, j, m, n, p, softmax_abbreviations, z

normaliser = Sum(exp(z[m]), (m, 1, n))

derivation = Derivation(
    title="The softmax Jacobian is diag(p) - p p^T",
    claim=Eq(Derivative(p[i], z[j]), p[i] * (KroneckerDelta(i, j) - p[j])),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        Step(exp(z[i]) * KroneckerDelta(i, j) / normaliser
             - exp(z[i]) * Sum(exp(z[m]) * KroneckerDelta(j, m), (m, 1, n)) / normaliser**2,
             "differentiate", "quotient rule; $\\partial e^{z_i}/\\partial z_j = "
                              "\\delta_{ij} e^{z_i}$"),
        Step(exp(z[i]) * KroneckerDelta(i, j) / normaliser
             - exp(z[i]) * exp(z[j]) / normaliser**2,
             "sift", "only the term $m = j$ of the normaliser depends on $z_j$"),
        Step(p[i] * (KroneckerDelta(i, j) - p[j]), "algebra",
             "$p_i = e^{z_i} / \\sum_m e^{z_m}$"),
    ],
)
