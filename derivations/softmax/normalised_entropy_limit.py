"""The normalised entropy: log n (1 - H(p) / log n) -> s^2/2 almost surely, for n i.i.d.
N(0, s^2) logits, that is H(p) / log n = 1 - s^2 / (2 log n) + o(1 / log n).

The same law of large numbers as entropy_limit, read in the units a length-aware softmax cares
about: H / log n, the entropy as a fraction of its largest value.  For a fixed s the fraction
tends to 1, slowly: the deficit is s^2 / (2 log n).  Read the other way: holding H / log n near
1 - f as n grows needs s^2 of about 2 f log n, a scale s that grows like sqrt(log n).  That
corollary is read off the expansion (docs/softmax-scaling.md gives the error term,
O(e^{s^2} / (n log n)), and Monte Carlo at n up to 4096); the limit checked here is for a fixed s.
"""

from sympy import Eq, exp, log

from sdpa_proofs import Derivation, E, Lim, Step, n, s, softmax_entropy, z

derivation = Derivation(
    title="H(p) / log n = 1 - s^2 / (2 log n) + o(1 / log n): log n (1 - H / log n) -> s^2/2",
    claim=Eq(Lim(log(n) * (1 - softmax_entropy / log(n)), n), s**2 / 2),
    models=["gaussian-logits"],
    steps=[
        Step(E(z[1] * exp(z[1])) / E(exp(z[1])) - log(E(exp(z[1]))), "law_of_large_numbers",
             "$\\log n - H$ is a continuous function of the sample means of $e^z$ and "
             "$z e^z$ (the first positive)"),
        Step(s**2 * E(exp(z[1])) / E(exp(z[1])) - log(E(exp(z[1]))), "stein",
             "$\\mathbb{E}[z g(z)] = s^2 \\mathbb{E}[g'(z)]$"),
        Step(s**2 - log(exp(s**2 / 2)), ["gaussian_mgf", "algebra"],
             "$\\mathbb{E}[e^{z}] = e^{s^2/2}$"),
        Step(s**2 / 2, "algebra"),
    ],
)
