"""Closed forms shared by the shared-factor derivations (a helper: not itself a derivation)."""

from sdpa_proofs import alpha, beta, sigma_k, sigma_q

# the part of Var(S) that is linear in d, under both shared-factor models
LINEAR = alpha**2 * sigma_k**2 + beta**2 * sigma_q**2 + sigma_q**2 * sigma_k**2
# E[q_i^2 k_i^2] with q_i = alpha z + sigma_q e_i, k_i = beta z' + sigma_k f_i
DIAGONAL_SAME = 3 * alpha**2 * beta**2 + LINEAR        # z' = z
DIAGONAL_SEPARATE = alpha**2 * beta**2 + LINEAR        # z' independent of z
