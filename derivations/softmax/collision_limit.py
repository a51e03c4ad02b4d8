"""n sum_i p_i^2 -> e^{s^2} almost surely, for n i.i.d. N(0, s^2) logits: the limit itself.

n sum_i p_i^2 = n sum_i e^{2 z_i} / (sum_m e^{z_m})^2 = (mean of e^{2z}) / (mean of e^{z})^2.
The law of large numbers rule checks its conditions under the model: the logits are i.i.d.,
e^{2z} and e^{z} have finite means (a Gaussian's moment generating function is finite), and the
map (a, b) -> a / b^2 is continuous at the limit point, where b = E[e^z] > 0 (a mean of positive
terms).  So the collision probability is e^{s^2} / n to first order: the softmax spreads its
weight over about n / e^{s^2} keys.  (collision_large_n proves the same closed form as a ratio
of expectations, without the limit.)
"""

from sympy import Eq, Sum, exp

from sdpa_proofs import Derivation, E, Lim, Step, i, n, s, z

derivation = Derivation(
    title="lim n sum p^2 = e^{s^2} almost surely: the law of large numbers, checked",
    claim=Eq(Lim(n * Sum(exp(2 * z[i]), (i, 1, n)) / Sum(exp(z[i]), (i, 1, n))**2, n),
             exp(s**2)),
    models=["gaussian-logits"],
    steps=[
        Step(E(exp(2 * z[1])) / E(exp(z[1]))**2, "law_of_large_numbers",
             "sample means of i.i.d. terms converge to their means; $a/b^2$ is continuous "
             "where $b > 0$"),
        Step(exp(2 * s**2) / exp(s**2 / 2)**2, "gaussian_mgf",
             "$\\mathbb{E}[e^{t z}] = e^{t^2 s^2 / 2}$"),
        Step(exp(s**2), "algebra"),
    ],
)
