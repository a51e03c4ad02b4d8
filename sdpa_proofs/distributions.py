"""Zero-mean distribution families, each parametrised by its standard deviation sigma.

For each: exact moments (for the symbolic engine), a quadrature rule that integrates polynomials
exactly against the family's own density (for the numerical check), and a NumPy sampler.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import factorial

import mpmath
import numpy as np
import sympy as sp
from sympy import Expr

from .gauss import gauss_rule


@dataclass(frozen=True)
class Family:
    name: str
    latex: str  # how "X ~ family(sigma)" reads, with {s} for sigma
    #: the standardised law's support is [-end, end], end exact (None: the whole line)
    end = None
    #: the support is the two points -end and end only
    two_points = False

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

    def log_density(self, x) -> mpmath.mpf:
        """log of the standardised law's density at x, for a law on the whole line (a bounded
        law has no tails to weigh)."""
        raise NotImplementedError

    def sd_from(self, value) -> Expr:
        """The standard deviation of the law whose usual parameter is ``value`` (families are
        parametrised by the standard deviation here): Normal's sigma is its sd, Uniform(-a, a)
        has sd a / sqrt(3), Rademacher's +-a has sd a, Laplace(0, b) has sd sqrt(2) b."""
        return sp.sympify(value)


#: Gauss rules computed so far: (points, kind, digits) -> (nodes, weights).  128 points take a
#: quarter of a second, so the checking workers send the rules they computed back to the
#: parent, whose later workers then start with them (see isolation).
GAUSS_RULES: dict[tuple, tuple] = {}


def _gauss(points: int, kind: str, dps: int) -> tuple:
    key = (points, kind, precision_tier(dps))
    if key not in GAUSS_RULES:
        GAUSS_RULES[key] = gauss_rule(kind, points, key[2])
    return GAUSS_RULES[key]


@lru_cache(maxsize=1024)
def standard_rule(family: Family, points: int, dps: int) -> tuple:
    """``family.rule`` of the standardised law (sigma = 1), remembered: integrands ask for the
    same few rules thousands of times."""
    return tuple(family.rule(points, mpmath.mpf(1), dps))


def precision_tier(dps: int) -> int:
    """The working precision a rule is computed at: dps rounded up to a multiple of 16.  Nodes
    more precise than asked for are only more accurate, and checks that work at 45 and 48
    digits then share one rule instead of computing two."""
    return -(-dps // 16) * 16


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
        draws = rng.standard_normal(shape)  # what rng.normal(0, sigma) draws, a pass sooner
        if sigma != 1.0:
            draws *= sigma
        return draws

    def log_density(self, x):
        return -x * x / 2 - mpmath.log(2 * mpmath.pi) / 2


class Uniform(Family):
    """Uniform on [-a, a] with a = sqrt(3) sigma."""

    end = sp.sqrt(3)

    def sd_from(self, value):
        return sp.sympify(value) / sp.sqrt(3)

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

    end, two_points = sp.S.One, True

    def even_moment(self, n, sigma):
        return sigma ** n

    def rule(self, points, sigma, dps):
        """The law itself (two points), or for one point the node 0: exact up to degree 1,
        where E[f] = f(0) for f affine."""
        with mpmath.workdps(dps):
            if points == 1:
                return [(mpmath.mpf(1), mpmath.mpf(0))]
            s = mpmath.mpf(sigma)
            return [(mpmath.mpf(1) / 2, s), (mpmath.mpf(1) / 2, -s)]

    def points_for_degree(self, degree):
        return 1 if degree <= 1 else 2

    def sample(self, rng, shape, sigma):
        return sigma * random_signs(rng, shape)


class Laplace(Family):
    """Density e^(-|x|/b) / (2b) with b = sigma / sqrt(2)."""

    def sd_from(self, value):
        return sp.sqrt(2) * sp.sympify(value)

    def even_moment(self, n, sigma):
        return sp.factorial(n) * (sigma / sp.sqrt(2)) ** n

    def log_density(self, x):
        """b = 1 / sqrt(2): e^(-sqrt(2) |x|) / sqrt(2)."""
        return -mpmath.sqrt(2) * abs(x) - mpmath.log(2) / 2

    def rule(self, points, sigma, dps):
        """Exact for polynomials of degree < 2 * points.  Up to MOMENT_RULE_POINTS points, the
        Gauss rule of the density itself (from its moments E[(X/b)^n] = n!, n even); beyond,
        where exact rational recurrences grow too costly, Gauss-Laguerre on each half-line,
        reflected (twice the nodes)."""
        with mpmath.workdps(dps):
            b = sigma / mpmath.sqrt(2)
        if points <= MOMENT_RULE_POINTS:
            key = (points, "laplace", precision_tier(dps))
            if key not in GAUSS_RULES:
                moments = [factorial(n) if n % 2 == 0 else 0 for n in range(2 * points)]
                GAUSS_RULES[key] = gauss_from_moments(moments, points, key[2])
            nodes, weights = GAUSS_RULES[key]
            with mpmath.workdps(dps):
                return [(w, b * x) for x, w in zip(nodes, weights)]
        nodes, weights = _gauss(points, "laguerre", dps)
        with mpmath.workdps(dps):
            half = [(w / 2, b * x) for x, w in zip(nodes, weights)]
            return half + [(w, -x) for w, x in half]

    def sample(self, rng, shape, sigma):
        """b E S for a standard exponential E and an independent random sign S: Laplace(0, b),
        whose |X| / b is exponential and whose sign is fair and independent of |X|; drawn
        about three times as fast as NumPy's own Laplace sampler (a logarithm per draw)."""
        draws = rng.standard_exponential(shape)
        draws *= random_signs(rng, shape)
        draws *= sigma / np.sqrt(2.0)
        return draws


MOMENT_RULE_POINTS = 16


def random_stream(*entropy: int) -> np.random.Generator:
    """A generator seeded by ``entropy`` (what the stream is for).  SFC64, a small chaotic
    counter-based generator that passes the BigCrush and PractRand batteries, draws normals a
    quarter faster than NumPy's default PCG64 here; the samplers draw about 10^8 a run."""
    return np.random.Generator(np.random.SFC64(np.random.SeedSequence(list(entropy))))


def random_signs(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Independent fair signs, -1.0 or +1.0: one random bit each (eight per random byte, far
    faster than drawing from [-1, 1])."""
    size = int(np.prod(shape))
    bits = np.unpackbits(rng.integers(0, 256, size=(size + 7) // 8, dtype=np.uint8))[:size]
    return (bits * 2.0 - 1.0).reshape(shape)


def gauss_from_moments(moments: list[int], points: int, dps: int) -> tuple:
    """Nodes and weights of the ``points``-point Gauss rule of a probability law from its
    moments E[X^0..X^(2 points - 1)]: the three-term recurrence by Chebyshev's algorithm in
    exact rational arithmetic (the moment map is ill-conditioned in floating point), then the
    eigenvalues of the Jacobi matrix (Golub-Welsch) at ``dps`` digits."""
    alpha, beta = _recurrence(moments, points)
    with mpmath.workdps(dps + 10):
        jacobi = mpmath.matrix(points, points)
        for n in range(points):
            jacobi[n, n] = mpmath.mpf(alpha[n].numerator) / alpha[n].denominator
            if n:
                off = mpmath.sqrt(mpmath.mpf(beta[n].numerator) / beta[n].denominator)
                jacobi[n, n - 1] = jacobi[n - 1, n] = off
        nodes, vectors = mpmath.eigsy(jacobi)
        weights = [vectors[0, n] ** 2 * moments[0] for n in range(points)]
    with mpmath.workdps(dps):
        return tuple(+x for x in nodes), tuple(+w for w in weights)


def _recurrence(moments: list[int], points: int) -> tuple[list[Fraction], list[Fraction]]:
    """alpha_n, beta_n of the monic orthogonal polynomials, p_(n+1) = (x - alpha_n) p_n -
    beta_n p_(n-1), from the moments (Gautschi, Orthogonal Polynomials, algorithm 2.1)."""
    previous = [Fraction(0)] * len(moments)
    current = [Fraction(m) for m in moments]
    alpha = [current[1] / current[0]]
    beta = [current[0]]
    for n in range(1, points):
        following = [Fraction(0)] * len(moments)
        for m in range(n, 2 * points - n):
            following[m] = current[m + 1] - alpha[n - 1] * current[m] - beta[n - 1] * previous[m]
        alpha.append(following[n + 1] / following[n] - current[n] / current[n - 1])
        beta.append(following[n] / current[n - 1])
        previous, current = current, following
    return alpha, beta


NORMAL = Normal("Normal", r"\mathcal{{N}}(0, {s}^2)")
UNIFORM = Uniform("Uniform", r"\mathcal{{U}}(-\sqrt{{3}}\,{s}, \sqrt{{3}}\,{s})")
RADEMACHER = Rademacher("Rademacher", r"{s}\cdot\mathrm{{Rademacher}}")
LAPLACE = Laplace("Laplace", r"\mathrm{{Laplace}}(0, {s}/\sqrt{{2}})")
FAMILIES = (NORMAL, UNIFORM, RADEMACHER, LAPLACE)
