"""For n i.i.d. N(0, s^2) logits, E[H(p)] -> log n - s^2/2 as n -> infinity: the entropy deficit
of the softmax tends to s^2/2 nats.  Only in the limit: at s = 2 (limit 2 nats) the deficit is
about 1.13 nats at n = 16, 1.77 at n = 256 and 1.97 at n = 4096 (Monte Carlo, docs/softmax-
scaling.md); the 1/n term of sdpa_proofs.softmax.large_n_limit needs n >> e^{4 s^2}.

H(p) = log sum_i e^{z_i} - sum_i p_i z_i = log n + log(sum_i e^{z_i} / n)
                                          - (sum_i z_i e^{z_i} / n) / (sum_i e^{z_i} / n).
By the law of large numbers (n -> infinity, s fixed; every exponential moment of a Gaussian is
finite) the sample means converge to E[e^z] and E[z e^z], so

    E[H] - log n  ->  log E[e^z] - E[z e^z] / E[e^z],

which this derivation evaluates, written with the sums over the n logits: -s^2/2.  With
1/sqrt(d_k) the logit scale s stays fixed as d_k grows, so the entropy deficit does too; with
scale 1 (no division), s grows like sqrt(d_k) and the deficit like d_k / 2, until the softmax is
one-hot.  The 1/n correction, and Monte Carlo of the entropy itself, are in
sdpa_proofs.softmax.large_n_limit and tests/test_softmax.py; the almost-sure limit itself, with
the law of large numbers' conditions checked, is entropy_limit.
"""

from sympy import Eq, Sum, exp, log

from sdpa_proofs import Derivation, E, Step, i, n, s, z

normaliser = Sum(exp(z[i]), (i, 1, n))

derivation = Derivation(
    title="Large n: E[H] -> log n - s^2/2",
    claim=Eq(log(E(normaliser)) - E(Sum(z[i] * exp(z[i]), (i, 1, n))) / E(normaliser),
             log(n) - s ** 2 / 2),
    models=["gaussian-logits"],
    steps=[
        Step(log(Sum(E(exp(z[i])), (i, 1, n)))
             - Sum(E(z[i] * exp(z[i])), (i, 1, n)) / Sum(E(exp(z[i])), (i, 1, n)),
             "linearity", "expectation of a sum"),
        Step(log(Sum(E(exp(z[i])), (i, 1, n)))
             - Sum(s ** 2 * E(exp(z[i])), (i, 1, n)) / Sum(E(exp(z[i])), (i, 1, n)),
             "stein", "$\\mathbb{E}[z g(z)] = s^2 \\mathbb{E}[g'(z)]$, and $(e^z)' = e^z$"),
        Step(log(Sum(exp(s ** 2 / 2), (i, 1, n)))
             - Sum(s ** 2 * exp(s ** 2 / 2), (i, 1, n)) / Sum(exp(s ** 2 / 2), (i, 1, n)),
             "gaussian_mgf", "$\\mathbb{E}[e^{z}] = e^{s^2 / 2}$"),
        Step(log(n * exp(s ** 2 / 2)) - n * s ** 2 * exp(s ** 2 / 2) / (n * exp(s ** 2 / 2)),
             "count_terms", "$n$ equal terms"),
        Step(log(n) - s ** 2 / 2, "algebra", "$\\log(n e^{s^2/2}) = \\log n + s^2/2$"),
    ],
)
