"""The standard names of the seed's argument: q, k in R^d, indices i, j, scales sigma_q, sigma_k."""

import sympy as sp

from .expressions import RandomVector

q = RandomVector("q", real=True)
k = RandomVector("k", real=True)
d = sp.Symbol("d", integer=True, positive=True)
i, j = sp.symbols("i j", integer=True, positive=True)
sigma_q = sp.Symbol("sigma_q", positive=True)
sigma_k = sp.Symbol("sigma_k", positive=True)

S = sp.Symbol("S")
dot_product = sp.Sum(q[i] * k[i], (i, 1, d))
