"""Why the scale matters: how softmax saturates, in numbers.

For logits x in R^n and p = softmax(x):

- entropy H(p) = -sum p_i log p_i: log n when p is uniform, 0 when it is one-hot;
- max_i p_i;
- collision sum p_i^2: 1/n when uniform, 1 when one-hot;
- the Jacobian J = dp/dx = diag(p) - p p^T, with ||J||_F^2 = sum p^2 - 2 sum p^3 + (sum p^2)^2.
  Its rows sum to zero and ||J||_inf = max_i 2 p_i (1 - p_i) <= 2 (1 - max p), so J -> 0 as p
  approaches a one-hot vector: gradients through a saturated softmax vanish.

For n i.i.d. N(0, s^2) logits the law of large numbers (s fixed, n -> infinity; the expansions
below need n >> e^{4 s^2}, see ``limit_applies``) gives, with E[e^{sX}] = e^{s^2/2}:

    E[H] = log n - s^2/2 + O(1/n),    n E[sum p^2] -> e^{s^2},    sqrt(n) E||J||_F -> e^{s^2/2};

``large_n_limit`` adds the 1/n terms.

For n = 2 every statistic is a one-dimensional integral, evaluated to high precision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np

STATISTICS = ("entropy", "max_p", "collision", "jacobian")
LABELS = {"entropy": "entropy / log n", "max_p": "max p", "collision": "n · Σp²",
          "jacobian": "√n · ‖J‖_F"}


def softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax along the last axis, shifted by the maximum for stability."""
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def statistics(p: np.ndarray) -> dict[str, np.ndarray]:
    """Each statistic of probability vectors p (last axis), normalised so that the uniform
    distribution gives entropy 1, collision 1 and (for large n) sqrt(n)||J||_F near 1."""
    n = p.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(p > 0, p * np.log(p), 0.0)
    square, cube = (p**2).sum(axis=-1), (p**3).sum(axis=-1)
    return {"entropy": -plogp.sum(axis=-1) / np.log(n),
            "max_p": p.max(axis=-1),
            "collision": n * square,
            "jacobian": np.sqrt(n * np.maximum(square - 2 * cube + square**2, 0.0))}


# -- n = 2: exact by one-dimensional integration ---------------------------------------------

def _two_logit_statistic(name: str) -> Callable:
    """The statistic of p = (sigma(t), 1 - sigma(t)) for a logit difference t, normalised as in
    ``statistics`` (n = 2)."""
    def plogp(x):
        return x * mpmath.log(x) if x > 0 else mpmath.mpf(0)

    def entropy(a, b):
        return -(plogp(a) + plogp(b)) / mpmath.log(2)

    forms = {"entropy": entropy, "max_p": lambda a, b: max(a, b),
             "collision": lambda a, b: 2 * (a**2 + b**2),
             "jacobian": lambda a, b: mpmath.sqrt(2) * 2 * a * b}  # ||J||_F = 2 p (1 - p)
    form = forms[name]

    def at(t):
        # both probabilities computed directly: 1 - a would round to 0 in the tails
        return form(1 / (1 + mpmath.exp(-t)), 1 / (1 + mpmath.exp(t)))
    return at


def exact_two_logits(name: str, s: float, dps: int = 30) -> tuple[mpmath.mpf, float]:
    """E[statistic] for two i.i.d. N(0, s^2) logits: their difference t ~ N(0, 2 s^2), so the
    expectation is one integral, done by tanh-sinh quadrature at ``dps`` digits and again with
    10 more; returns the value and the digits on which the two runs agree."""
    f = _two_logit_statistic(name)

    def integral(digits: int) -> mpmath.mpf:
        with mpmath.workdps(digits):
            scale = mpmath.sqrt(2) * mpmath.mpf(s)
            return mpmath.quad(lambda t: f(t) * mpmath.npdf(t, 0, scale),
                               [-mpmath.inf, 0, mpmath.inf])

    value, finer = integral(dps), integral(dps + 10)
    difference = abs(value - finer)
    digits = float(dps) if difference == 0 else float(-mpmath.log10(difference / abs(finer)))
    return finer, min(digits, float(dps))


# -- large n: the law of large numbers, with its first correction ---------------------------

def large_n_limit(name: str, n: int, s: float) -> float | None:
    """E[normalised statistic] for n i.i.d. N(0, s^2) logits to first order in 1/n (delta
    method on the sample means of w = e^{sX}, whose moments are E[w^m] = e^{m^2 s^2 / 2}),
    or None where there is no such expansion (for max p the heuristic e^{s sqrt(2 log n) -
    s^2/2}/n is only an order of magnitude: 1.5 times the measured value at s = 1, n = 4096).

    - E[H] = log n - s^2/2 + (s^2 e^{s^2} - (e^{s^2} - 1)/2) / n
    - n E[sum p^2] = e^{s^2} (1 + (3 (e^{s^2} - 1) - 2 (e^{2 s^2} - 1)) / n)
    - sqrt(n) E||J||_F = sqrt(m) - v / (8 m^{3/2}), m = E[n ||J||_F^2], v its variance
    """
    a, b, c = np.exp(s**2), np.exp(2 * s**2), np.exp(3 * s**2)
    collision = a * (1 + (3 * (a - 1) - 2 * (b - 1)) / n)
    if name == "entropy":
        return (np.log(n) - s**2 / 2 + (s**2 * a - (a - 1) / 2) / n) / np.log(n)
    if name == "collision":
        return float(collision)
    if name == "jacobian":
        mean = collision + (b - 2 * c) / n
        variance = b * ((np.exp(4 * s**2) - 1) + 4 * (a - 1) - 4 * (b - 1)) / n
        return float(np.sqrt(mean) - variance / (8 * mean**1.5))
    return None


def neglected(n: int, s: float) -> float:
    """A bound on the terms the expansion leaves out, of order e^{8 s^2} / n^2 (the variance of
    sum w^2 is e^{4 s^2}-large, and it enters squared); it is added to the Monte Carlo error when
    estimates are compared with ``large_n_limit``."""
    return 10 * np.exp(8 * s**2) / n**2


def limit_applies(n: int, s: float) -> bool:
    """The condition of the expansion: the sample moments of w = e^{sX} up to the fourth
    concentrate, n >> e^{4 s^2} (here: n >= 30 e^{4 s^2})."""
    return 4 * s**2 < np.log(n / 30)


@dataclass
class Estimate:
    mean: float
    error: float  # standard error

    @property
    def interval(self) -> tuple[float, float]:
        return self.mean - 1.96 * self.error, self.mean + 1.96 * self.error

    def agrees_with(self, value: float, tolerance: float = 4.0, slack: float = 0.0) -> bool:
        """Within ``tolerance`` standard errors plus ``slack`` (a bound on what ``value``
        itself neglects)."""
        return abs(self.mean - value) <= tolerance * self.error + slack + 1e-12 * abs(value)


def estimate(values: np.ndarray) -> Estimate:
    return Estimate(float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values))))


def gaussian_logit_statistics(n: int, s: float, samples: int,
                              rng: np.random.Generator) -> dict[str, Estimate]:
    """Monte Carlo of every statistic for n i.i.d. N(0, s^2) logits."""
    p = softmax(s * rng.standard_normal((samples, n)))
    return {name: estimate(values) for name, values in statistics(p).items()}
