"""A token attending to itself: Var(q . k) = d_k sigma_w^4 ||x||^4 when x = y.

q = W_Q x and k = W_K x are built from the same vector, yet they are independent at
initialisation: W_Q and W_K are.  The dependence a trained model has between a token's query
and key comes from training, not from sharing the token.
"""

from _weights import SAME_TOKEN, SQUARED_NORM_X, variance_steps
from sympy import Eq

from sdpa_proofs import Derivation, S, Var, d, dot_product, sigma_w

derivation = Derivation(
    title="The same token for query and key: Var(q . k) = d sigma_w^4 ||x||^4",
    claim=Eq(Var(S), d * sigma_w**4 * SQUARED_NORM_X**2),
    where={S: dot_product},
    models=SAME_TOKEN,
    steps=variance_steps(SQUARED_NORM_X),
)
