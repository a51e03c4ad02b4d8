"""Pieces shared by the derivations about weights at initialisation (a helper module)."""

from sympy import Sum

from sdpa_proofs import E, S, Step, SumOverDistinct, Var, cite, d, i, j, k, q, sigma_w, x, y

from init_mean_zero import derivation as init_mean_zero

DIFFERENT_TOKENS = ["init-normal", "init-uniform", "init-rademacher", "init-laplace"]
SAME_TOKEN = [name.replace("init-", "init-same-token-") for name in DIFFERENT_TOKENS]
SQUARED_NORM_X = sum(v**2 for v in x)  # ||x||^2
SQUARED_NORM_Y = sum(v**2 for v in y)


def variance_steps(key_norm) -> list[Step]:
    """The seed's derivation of Var(S), with Var(q_i) = sigma_w^2 ||x||^2 (row i of W_Q against
    x) and Var(k_i) = sigma_w^2 ``key_norm``."""
    per_coordinate = sigma_w**4 * SQUARED_NORM_X * key_norm
    return [
        Step(E((S - E(S)) ** 2), "variance_definition", "definition of variance"),
        Step(E(S**2), cite(init_mean_zero), "$E[S] = 0$, proved in init_mean_zero"),
        Step(E(Sum(q[i] * k[i] * q[j] * k[j], (j, 1, d), (i, 1, d))), "expand_square",
             "the square of a sum is a double sum"),
        Step(Sum(E(q[i]**2 * k[i]**2), (i, 1, d))
             + SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d),
             ["linearity", "split_diagonal"], "diagonal and off-diagonal terms"),
        Step(Sum(E(q[i]**2) * E(k[i]**2), (i, 1, d))
             + SumOverDistinct(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), i, j, d),
             "independence",
             "$W_Q$ and $W_K$ are independent, and so are different rows of each"),
        Step(Sum((Var(q[i]) + E(q[i])**2) * (Var(k[i]) + E(k[i])**2), (i, 1, d))
             + SumOverDistinct(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), i, j, d),
             "second_moment", "$E[X^2] = Var(X) + E[X]^2$"),
        Step(Sum(per_coordinate, (i, 1, d)) + SumOverDistinct(0, i, j, d),
             ["model_variance", "zero_mean"],
             "$Var(q_i) = \\sum_a x_a^2 Var(W_{ia}) = \\sigma_w^2 \\|x\\|^2$; means zero"),
        Step(d * per_coordinate, "count_terms", "$d$ equal diagonal terms"),
    ]
