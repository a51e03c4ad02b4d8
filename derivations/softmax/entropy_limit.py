"""H(p) - log n -> -s^2/2 almost surely, for n i.i.d. N(0, s^2) logits: the limit itself.

H(p) = log sum_i e^{z_i} - sum_i z_i e^{z_i} / sum_i e^{z_i}, so
H(p) - log n = log(mean of e^z) - (mean of z e^z) / (mean of e^z): a function of two sample
means.  The law of large numbers rule checks that the logits are i.i.d., that e^z and z e^z have
finite means under the Gaussian model, and that the map is continuous at the limit point (the
mean of e^z is positive, so the logarithm and the division are).  The entropy deficit is s^2/2
in the limit; at finite n it is smaller (docs/softmax-scaling.md: 1.13, 1.77 and 1.97 nats at
s = 2 and n = 16, 256, 4096).
"""

from sympy import Eq, Sum, exp, log

from sdpa_proofs import Derivation, E, Lim, Step, i, n, s, z

normaliser = Sum(exp(z[i]), (i, 1, n))

derivation = Derivation(
    title="lim H(p) - log n = -s^2/2 almost surely: the law of large numbers, checked",
    claim=Eq(Lim(log(normaliser) - Sum(z[i] * exp(z[i]), (i, 1, n)) / normaliser - log(n), n),
             -s**2 / 2),
    models=["gaussian-logits"],
    steps=[
        Step(log(E(exp(z[1]))) - E(z[1] * exp(z[1])) / E(exp(z[1])), "law_of_large_numbers",
             "sample means converge to their means; $\\log a - b/a$ is continuous where "
             "$a > 0$"),
        Step(log(E(exp(z[1]))) - s**2 * E(exp(z[1])) / E(exp(z[1])), "stein",
             "$\\mathbb{E}[z g(z)] = s^2 \\mathbb{E}[g'(z)]$"),
        Step(log(exp(s**2 / 2)) - s**2, ["gaussian_mgf", "algebra"],
             "$\\mathbb{E}[e^{z}] = e^{s^2/2}$"),
        Step(-s**2 / 2, "algebra"),
    ],
)
