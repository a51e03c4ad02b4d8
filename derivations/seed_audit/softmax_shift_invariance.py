"""The seed: "if the values of QK^T are too large, softmax degenerates to nearly one-hot".

Not the values: their spread.  Adding the same c to every logit changes nothing,
softmax(z + c) = softmax(z), so logits that are all large but close together give a nearly
uniform softmax, and only differences between logits can saturate it.  This is why a mean common
to all keys (E[S] = d rho sigma_q sigma_k under per-coordinate correlation) is harmless, and why
1/sqrt(d_k) is about sd(S), the spread, not about the size of S.
"""

from sympy import Eq, Sum, Symbol, exp

from sdpa_proofs import Derivation, Step, i, m, n, softmax_p, z

c = Symbol("c", real=True)  # any shift common to all logits

derivation = Derivation(
    title="Softmax ignores a shift common to all logits: only their spread can saturate it",
    claim=Eq(exp(z[i] + c) / Sum(exp(z[m] + c), (m, 1, n)), softmax_p(i)),
    models=["gaussian-logits"],
    steps=[
        Step(exp(c) * exp(z[i]) / (exp(c) * Sum(exp(z[m]), (m, 1, n))), "algebra",
             "$e^{z + c} = e^c e^z$, and $e^c$ is common to every term of the sum"),
        Step(softmax_p(i), "algebra", "cancel $e^c$"),
    ],
)
