"""The standard names of the seed's argument: q, k in R^d, indices i, j, scales sigma_q, sigma_k."""

import sympy as sp

from .expressions import MaxOver, RandomVector

# Bases are built from their symbols, as SymPy rebuilds a base it writes out
# (base.func(*base.args)): the two are then one object (sympywork) and compare at once.
q = RandomVector(sp.Symbol("q", real=True))
k = RandomVector(sp.Symbol("k", real=True))
d = sp.Symbol("d", integer=True, positive=True)
i, j = sp.symbols("i j", integer=True, positive=True)
sigma_q = sp.Symbol("sigma_q", positive=True)
sigma_k = sp.Symbol("sigma_k", positive=True)

S = sp.Symbol("S")
S_qk = S  # the same symbol under a name that neither sympy.S nor a star import can shadow
dot_product = sp.Sum(q[i] * k[i], (i, 1, d))

# Softmax sees a row: one query q against several keys.  k~ is a second key of the same row as
# k, and S~ = q . k~ its logit (before scaling); what softmax feels is S - S~.
ktilde = RandomVector(sp.Symbol("ktilde", real=True))
S_tilde = sp.Symbol("Stilde")
other_dot_product = sp.Sum(q[i] * ktilde[i], (i, 1, d))

# softmax over n logits z_1..z_n
z = RandomVector(sp.Symbol("z", real=True))
n = sp.Symbol("n", integer=True, positive=True)
s = sp.Symbol("s", positive=True)  # the logits' standard deviation
m = sp.Symbol("m", integer=True, positive=True)  # the index of the softmax normaliser
l = sp.Symbol("l", integer=True, positive=True)  # noqa: E741 - the index of a maximum

#: the library's sizes: d coordinates, n keys; each is a value of an index only as its own
#: model's dimension (q_d is the last coordinate), never of the other's (delta(i, n) for i <= d)
SIZES = (d, n)


def in_every_range(index: sp.Expr, dimension: sp.Expr) -> bool:
    """Whether the index lies in 1..dimension whatever the dimension is: a whole number no
    larger than every dimension (1 always, 5 not for d < 5), or a positive integer symbol other
    than a size (a free index names a coordinate; n keys are no index of d coordinates)."""
    if index.is_Integer:
        return bool(index >= 1 and (index - dimension).is_nonpositive)
    return bool(index.is_Symbol and index.is_integer and index.is_positive
                and index not in (dimension, *SIZES))


def softmax_p(index) -> sp.Expr:
    """p_index = e^{z_index} / sum_m e^{z_m}."""
    return sp.exp(z[index]) / sp.Sum(sp.exp(z[m]), (m, 1, n))


p_max = MaxOver(softmax_p(l), (l, 1, n))  # the largest probability, max_l p_l
# H(p) = -sum_l p_l log p_l, written in the logits: log sum_m e^{z_m} - sum_m z_m p_m
softmax_entropy = sp.log(sp.Sum(sp.exp(z[m]), (m, 1, n))) \
    - sp.Sum(z[m] * sp.exp(z[m]), (m, 1, n)) / sp.Sum(sp.exp(z[m]), (m, 1, n))

# abbreviations for derivations about softmax: where=softmax_abbreviations lets steps say p[i]
# and P for p_i and max_l p_l
p = sp.IndexedBase(sp.Symbol("p", real=True))
P = sp.Symbol("p_max")
softmax_abbreviations = {p[l]: softmax_p(l), P: p_max}
