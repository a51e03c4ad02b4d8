"""Softmax sees differences of logits within a row, and a factor common to the row cancels.

One query q against two keys k, k~ of the same row, with a factor z common to the query and
all its keys and a key mean mu_k common to the row (model row-factor).  The difference of two
logits is S - S~ = sum_i q_i (k_i - k~_i), in which beta z and mu_k cancel:

    E[(S - S~)^2] / 2 = d sigma_k^2 (alpha^2 + sigma_q^2),

linear in d, so dividing by sqrt(d) keeps the within-row spread of order one.  Yet under the same
model Var(S) has terms 2 alpha^2 beta^2 d^2 + alpha^2 mu_k^2 d^2: reading saturation off the
variance of a single logit, as if every key brought its own z, predicts a softmax that is nearly
one-hot at sqrt(d), which the rows of this model never are (see key_factors_spread for a
factor that does differ from key to key).
"""

from _spread import spread_opening
from sympy import Eq, Sum

from sdpa_proofs import (Derivation, E, S, S_tilde, Step, SumOverDistinct, alpha, d,
                         dot_product, i, j, other_dot_product, sigma_k, sigma_q)

spread = sigma_k**2 * (alpha**2 + sigma_q**2)

derivation = Derivation(
    title="Within a row the common factor cancels: the logit spread is linear in d",
    claim=Eq(E((S - S_tilde)**2) / 2, d * spread),
    where={S: dot_product, S_tilde: other_dot_product},
    models=["row-factor"],
    steps=[
        *spread_opening(),
        Step((Sum(2 * spread, (i, 1, d)) + SumOverDistinct(0, i, j, d)) / 2,
             ["linearity", "isserlis"],
             "$k_i - \\tilde k_i = \\sigma_k (f_i - g_i)$: $z$ and $\\mu_k$ cancel, and what is "
             "left is independent of $q$ and across coordinates"),
        Step(d * spread, ["count_terms", "algebra"], "$d$ equal terms"),
    ],
)
