"""sum_i p_i^2 <= max_l p_l: the collision probability is at most the largest probability.

With max_probability_squared_at_most_collision this sandwiches max p between sum p^2 and its square
root, pointwise; so E[max p] lies between E[sum p^2] and sqrt(E[sum p^2]) (Jensen), and for n
i.i.d. N(0, s^2) logits the law of large numbers (collision_large_n) puts E[sum p^2] near
e^{s^2} / n: max p -> 1 needs s^2 of the order of log n.
"""

from sympy import Le, Sum, Symbol

from sdpa_proofs import Derivation, Step, i, n, p_max, softmax_p

P = Symbol("p_max")

derivation = Derivation(
    title="The collision probability is at most the largest probability: sum p^2 <= max p",
    claim=Le(Sum(softmax_p(i) ** 2, (i, 1, n)), P),
    where={P: p_max},
    models=["gaussian-logits"],
    steps=[
        Step(P * Sum(softmax_p(i), (i, 1, n)), "at_most_max",
             "$p_i^2 = p_i \\cdot p_i \\le p_{\\max} \\, p_i$", rel="<="),
        Step(P, "algebra", "$\\sum_i p_i = 1$"),
    ],
)
