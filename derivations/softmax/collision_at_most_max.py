"""sum_i p_i^2 <= max_l p_l: the collision probability is at most the largest probability.

With max_probability_squared_at_most_collision this sandwiches max p between sum p^2 and its square
root, pointwise; so E[max p] lies between E[sum p^2] and sqrt(E[sum p^2]) (Jensen), and for n
i.i.d. N(0, s^2) logits the law of large numbers (collision_large_n) puts E[sum p^2] near
e^{s^2} / n: max p -> 1 needs s^2 of the order of log n.
"""

from sympy import Le, Sum

from sdpa_proofs import Derivation, P, Step, i, n, p, softmax_abbreviations

derivation = Derivation(
    title="The collision probability is at most the largest probability: sum p^2 <= max p",
    claim=Le(Sum(p[i] ** 2, (i, 1, n)), P),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        Step(P * Sum(p[i], (i, 1, n)), "at_most_max",
             "$p_i^2 = p_i \\cdot p_i \\le p_{\\max} \\, p_i$", rel="<="),
        Step(P, "algebra", "$\\sum_i p_i = 1$"),
    ],
)
