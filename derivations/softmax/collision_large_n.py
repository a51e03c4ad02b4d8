"""For n i.i.d. N(0, s^2) logits, n E[sum_i p_i^2] -> e^{s^2}: the law of large numbers in
closed form.

n sum_i p_i^2 = (sum_i e^{2 z_i} / n) / (sum_i e^{z_i} / n)^2 is a ratio of sample means of
w = e^{z}.  As n grows with s fixed, both means converge to their expectations (strong law of
large numbers) and, every exponential moment of a Gaussian being finite, so does the expectation
of the ratio:

    n E[sum_i p_i^2]  ->  E[e^{2z}] / E[e^{z}]^2  =  n E[sum_i e^{2 z_i}] / E[sum_i e^{z_i}]^2.

This derivation evaluates the right-hand side: e^{s^2}.  So the softmax spreads its weight over
about n / e^{s^2} keys, and the logit scale s, not n, decides how peaked attention is.  The
limit is reached once n >> e^{4 s^2} (the variance of sum e^{2z} / n is e^{4 s^2} / n large);
`sdpa-proofs scaling` and tests/test_softmax.py compare Monte Carlo of the softmax itself with
this limit and its 1/n correction.
"""

from sympy import Eq, Sum, exp

from sdpa_proofs import Derivation, E, Step, i, n, s, z

derivation = Derivation(
    title="Large n: n E[sum p^2] -> E[e^{2z}] / E[e^z]^2 = e^{s^2}",
    claim=Eq(n * E(Sum(exp(2 * z[i]), (i, 1, n))) / E(Sum(exp(z[i]), (i, 1, n))) ** 2,
             exp(s ** 2)),
    models=["gaussian-logits"],
    steps=[
        Step(n * Sum(E(exp(2 * z[i])), (i, 1, n)) / Sum(E(exp(z[i])), (i, 1, n)) ** 2,
             "linearity", "expectation of a sum"),
        Step(n * Sum(exp(2 * s ** 2), (i, 1, n)) / Sum(exp(s ** 2 / 2), (i, 1, n)) ** 2,
             "gaussian_mgf", "$\\mathbb{E}[e^{t z}] = e^{t^2 s^2 / 2}$ for $z \\sim N(0, s^2)$"),
        Step(n * (n * exp(2 * s ** 2)) / (n * exp(s ** 2 / 2)) ** 2, "count_terms",
             "$n$ equal terms"),
        Step(exp(s ** 2), "algebra"),
    ],
)
