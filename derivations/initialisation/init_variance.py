"""At random initialisation Var(q . k) = d_k sigma_w^4 ||x||^2 ||y||^2.

For q = W_Q x and k = W_K y with independent weight matrices of i.i.d. zero-mean entries of
variance sigma_w^2, the coordinates q_i are independent with variance sigma_w^2 ||x||^2, the k_i
with sigma_w^2 ||y||^2, and q is independent of k: the seed's independent case, with
sigma_q^2 sigma_k^2 = sigma_w^4 ||x||^2 ||y||^2.  So the logit's standard deviation is
sqrt(d_k) sigma_w^2 ||x|| ||y||, and dividing by sqrt(d_k) removes d_k from it whatever the law
of the weights (tokens here in R^3; any fixed embedding dimension goes the same way).
"""

from _weights import DIFFERENT_TOKENS, SQUARED_NORM_X, SQUARED_NORM_Y, variance_steps
from sympy import Eq

from sdpa_proofs import Derivation, S, Var, d, dot_product, sigma_w

derivation = Derivation(
    title="At initialisation Var(q . k) = d sigma_w^4 ||x||^2 ||y||^2",
    claim=Eq(Var(S), d * sigma_w**4 * SQUARED_NORM_X * SQUARED_NORM_Y),
    where={S: dot_product},
    models=DIFFERENT_TOKENS,
    steps=variance_steps(SQUARED_NORM_Y),
)
