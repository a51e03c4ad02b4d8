"""The softmax Jacobian vanishes as p approaches one-hot: tr J <= 2 (1 - max_l p_l).

J = diag(p) - p p^T is symmetric and positive semi-definite (x^T J x is the variance of x under
p), so its trace is the sum of its non-negative eigenvalues: it bounds the spectral norm, the
Frobenius norm and every entry.  The bound is explicit in the largest probability: when the
logits are spread far apart (no 1/sqrt(d_k)), max p -> 1 and every gradient through J -> 0.
"""

from sympy import Le

from sdpa_proofs import Derivation, MaxOver, P, Step, i, n, p, softmax_abbreviations

from _trace import TRACE, trace_opening

derivation = Derivation(
    title="The softmax Jacobian vanishes as max p -> 1: tr J <= 2(1 - max p)",
    claim=Le(TRACE, 2 * (1 - P)),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        *trace_opening(),
        Step(1 - MaxOver(p[i] ** 2, (i, 1, n)), "sum_at_least_max",
             "a sum of non-negative terms is at least its largest term", rel="<="),
        Step(1 - P ** 2, "max_monotone", "$x \\mapsto x^2$ is increasing on $[0, 1]$"),
        Step((1 - P) * (1 + P), "algebra", "difference of squares"),
        Step(2 * (1 - P), "range", "$p_{\\max} \\le 1$, and the factor $1 - p_{\\max}$ is "
                                   "non-negative", rel="<="),
    ],
)
