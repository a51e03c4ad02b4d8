"""E[S^4] = 3 d (d + 2) sigma_q^4 sigma_k^4 for Gaussian q, k: the fourth moment of the dot
product, by Isserlis' theorem and the index coincidences it leaves.

S^4 is a sum over four indices (i, j, l, m).  For Gaussian coordinates
E[q_i q_j q_l q_m] = sigma_q^4 (delta_ij delta_lm + delta_il delta_jm + delta_im delta_jl), the
three ways of pairing four indices, and the same for k; the square of the three pairings has
three terms that fix two pairs (d^2 index tuples each) and six that tie all four indices together
(d each).  So E[S^4] = (3 d^2 + 6 d) sigma_q^4 sigma_k^4, and the kurtosis of S (see kurtosis)
is 3 + 6/d: S / sqrt(d) has the tails of a Gaussian ever more closely as d grows.  The argument
is Gaussian's own: for other laws E[q_i^4] is not 3 sigma_q^4, and the d terms with
i = j = l = m change.
"""

from sympy import Eq, KroneckerDelta, Sum

from sdpa_proofs import (Derivation, E, S, Step, d, dot_product, i, j, k, l, m, q, sigma_k,
                         sigma_q)

limits = ((m, 1, d), (l, 1, d), (j, 1, d), (i, 1, d))
delta = KroneckerDelta
pairings = delta(i, j) * delta(l, m) + delta(i, l) * delta(j, m) + delta(i, m) * delta(j, l)

derivation = Derivation(
    title="The fourth moment of the dot product: E[S^4] = 3 d (d + 2) sigma_q^4 sigma_k^4",
    claim=Eq(E(S**4), 3 * d * (d + 2) * sigma_q**4 * sigma_k**4),
    where={S: dot_product},
    models=["independent-normal"],
    steps=[
        Step(E(Sum(q[i] * k[i] * q[j] * k[j] * q[l] * k[l] * q[m] * k[m], *limits)),
             "expand_square", "$S^4$ is a sum over four indices"),
        Step(Sum(E(q[i] * q[j] * q[l] * q[m]) * E(k[i] * k[j] * k[l] * k[m]), *limits),
             ["linearity", "independence"], "$q$ and $k$ are independent"),
        Step(Sum(sigma_q**4 * sigma_k**4 * pairings**2, *limits), ["isserlis", "algebra"],
             "Isserlis: the three pairings of $i, j, l, m$, for $q$ and for $k$"),
        Step(sigma_q**4 * sigma_k**4 * (3 * Sum(delta(i, j) * delta(l, m), *limits)
                                        + 6 * Sum(delta(i, j) * delta(i, l) * delta(j, m)
                                                  * delta(l, m), *limits)), "algebra",
             "the square: three terms fix two pairs and six tie all four indices, each alike "
             "once the indices are renamed"),
        Step(sigma_q**4 * sigma_k**4 * (3 * Sum(1, (l, 1, d), (i, 1, d)) + 6 * Sum(1, (i, 1, d))),
             ["sift", "algebra"], "$\\sum_m \\delta_{lm} f(m) = f(l)$, one index at a time"),
        Step(3 * d * (d + 2) * sigma_q**4 * sigma_k**4, ["count_terms", "algebra"],
             "$d^2$ index tuples where two pairs are fixed, $d$ where all four are one"),
    ],
)
