"""Zero-mean distribution families, each parametrised by its standard deviation sigma.

For each: exact moments (for the symbolic engine), a quadrature rule that integrates polynomials
exactly against the family's own density (for the numerical check), and a NumPy sampler.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp
from sympy import Expr


@dataclass(frozen=True)
class Family:
    name: str
    latex: str  # how "X ~ family(sigma)" reads, with {s} for sigma

    def moment(self, n: int, sigma: Expr) -> Expr:
        """E[X^n] for X of this family with mean 0 and standard deviation sigma."""
        if n % 2:
            return sp.S.Zero
        return self.even_moment(n, sigma)

    def even_moment(self, n: int, sigma: Expr) -> Expr:
        raise NotImplementedError

    def rule(self, points: int, sigma, dps: int) -> list[tuple]:
        """(weight, node) pairs with sum(weight * f(node)) = E[f(X)], exact for polynomial f of
        degree < 2 * points; weights sum to one."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, shape, sigma: float) -> np.ndarray:
        raise NotImplementedError

    def points_for_degree(self, degree: int) -> int:
        return degree // 2 + 1


#: Gauss rules computed so far: (points, kind, digits) -> (nodes, weights).  mpmath takes
#: about half a second for 128 points at 55 digits, so the checking workers send the rules they
#: computed back to the parent, whose later workers then start with them (see isolation).
GAUSS_RULES: dict[tuple, tuple] = {}


def _gauss(points: int, kind: str, dps: int) -> tuple:
    key = (points, kind, dps)
    if key not in GAUSS_RULES:
        with mpmath.workdps(dps):
            nodes, weights = mpmath.mp.gauss_quadrature(points, kind)
            GAUSS_RULES[key] = tuple(nodes), tuple(weights)
    return GAUSS_RULES[key]


class Normal(Family):
    def even_moment(self, n, sigma):
        return sigma ** n * sp.factorial2(n - 1)

    def rule(self, points, sigma, dps):
        """Gauss-Hermite: E[f(X)] = pi^(-1/2) sum w f(sqrt(2) sigma x) for weight e^(-x^2)."""
        nodes, weights = _gauss(points, "hermite", dps)
        with mpmath.workdps(dps):
            scale = mpmath.sqrt(2) * sigma
            return [(w / mpmath.sqrt(mpmath.pi), scale * x) for x, w in zip(nodes, weights)]

    def sample(self, rng, shape, sigma):
        return rng.normal(0.0, sigma, shape)


class Uniform(Family):
    """Uniform on [-a, a] with a = sqrt(3) sigma."""

    def even_moment(self, n, sigma):
        return (sp.sqrt(3) * sigma) ** n / (n + 1)

    def rule(self, points, sigma, dps):
        nodes, weights = _gauss(points, "legendre", dps)
        with mpmath.workdps(dps):
            half_width = mpmath.sqrt(3) * sigma
            return [(w / 2, half_width * x) for x, w in zip(nodes, weights)]

    def sample(self, rng, shape, sigma):
        half_width = np.sqrt(3.0) * sigma
        return rng.uniform(-half_width, half_width, shape)


class Rademacher(Family):
    """+sigma or -sigma with probability 1/2 each."""

    def even_moment(self, n, sigma):
        return sigma ** n

    def rule(self, points, sigma, dps):
        with mpmath.workdps(dps):
            s = mpmath.mpf(sigma)
            return [(mpmath.mpf(1) / 2, s), (mpmath.mpf(1) / 2, -s)]

    def points_for_degree(self, degree):
        return 1

    def sample(self, rng, shape, sigma):
        return sigma * rng.choice(np.array([-1.0, 1.0]), size=shape)


class Laplace(Family):
    """Density e^(-|x|/b) / (2b) with b = sigma / sqrt(2)."""

    def even_moment(self, n, sigma):
        return sp.factorial(n) * (sigma / sp.sqrt(2)) ** n

    def rule(self, points, sigma, dps):
        """Gauss-Laguerre on each half-line, reflected: exact for polynomials of degree < 2n."""
        nodes, weights = _gauss(points, "laguerre", dps)
        with mpmath.workdps(dps):
            b = sigma / mpmath.sqrt(2)
            half = [(w / 2, b * x) for x, w in zip(nodes, weights)]
            return half + [(w, -x) for w, x in half]

    def sample(self, rng, shape, sigma):
        return rng.laplace(0.0, sigma / np.sqrt(2.0), shape)


NORMAL = Normal("Normal", r"\mathcal{{N}}(0, {s}^2)")
UNIFORM = Uniform("Uniform", r"\mathcal{{U}}(-\sqrt{{3}}\,{s}, \sqrt{{3}}\,{s})")
RADEMACHER = Rademacher("Rademacher", r"{s}\cdot\mathrm{{Rademacher}}")
LAPLACE = Laplace("Laplace", r"\mathrm{{Laplace}}(0, {s}/\sqrt{{2}})")
FAMILIES = (NORMAL, UNIFORM, RADEMACHER, LAPLACE)
