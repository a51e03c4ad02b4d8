"""The scaling comparison: softmax(S / c) for c in {1, sqrt(d), d}, as d grows, under a model.

The n logits are n independent draws of S = q.k from the model (one (q, k) pair per key), so the
softmax statistics depend on the spread sd(S) / c, taken from the exact engine; a common mean
would cancel in the softmax.  Where the model satisfies a central limit theorem (no shared
latent factor) and d is large, S / c is close to N(0, s^2) with s = sd(S) / c, and the Monte Carlo
estimates are compared with the large-n limits for Gaussian logits (``softmax.large_n_limit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .expressions import SD
from .models import LatentLinearModel, Model
from .moments import ExactEvaluator
from .softmax import (
    STATISTICS,
    Estimate,
    estimate,
    large_n_limit,
    limit_applies,
    neglected,
    softmax,
    statistics,
)
from .symbols import dot_product

SCALES = {"1": lambda dim: 1.0, "√d": np.sqrt, "d": float}
DIMENSIONS = (16, 64, 256, 1024, 4096)
DEFAULT_MODELS = ("independent-normal", "correlated-normal", "shared-factor")
CLT_FROM_DIMENSION = 1024  # below this the logits' non-Gaussianity is not negligible
CHUNK = 2048


@dataclass
class ScalingRow:
    model: str
    scale: str
    d: int
    n: int
    logit_sd: float | None  # exact sd(S) / c, when the model has a closed form
    estimates: dict[str, Estimate] = field(default_factory=dict)
    gaussian_limits: dict[str, float] = field(default_factory=dict)

    @property
    def agreement(self) -> dict[str, bool]:
        """For each statistic with a Gaussian large-n value: does the estimate agree?"""
        if not self.gaussian_limits:
            return {}
        slack = neglected(self.n, self.logit_sd)
        return {name: self.estimates[name].agrees_with(value, slack=slack)
                for name, value in self.gaussian_limits.items()}


def satisfies_clt(model: Model) -> bool:
    """S / sd(S) tends to N(0, 1) when the coordinates share no latent factor."""
    return isinstance(model, LatentLinearModel) and not any(l.shared for l in model.latents)


def logit_spread(model: Model, dim: int) -> float | None:
    """sd(S) at dimension ``dim`` and the model's first parameter point, from the exact engine."""
    if model.index_generic:
        return None
    closed = ExactEvaluator(model).value(SD(dot_product))
    return float(closed.xreplace({**model.parameter_points[0], model.dimension: dim}))


def draw_logits(model: Model, dim: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` independent draws of S at dimension ``dim``, in chunks to bound memory."""
    point = model.parameter_points[0]
    draws = []
    for start in range(0, count, CHUNK):
        arrays = model.sample(rng, min(CHUNK, count - start), dim, point)
        q, k = (arrays[v] for v in model.vectors[:2])
        draws.append((q * k).sum(axis=1))
    return np.concatenate(draws)


def scaling(model: Model, dims=DIMENSIONS, ns=(256,), samples: int = 64,
            seed: int = 2026) -> list[ScalingRow]:
    """Softmax statistics of S / c for every scale c, dimension d and number of keys n."""
    rows = []
    for dim in dims:
        rng = np.random.default_rng([seed, dim])
        draws = draw_logits(model, dim, samples * max(ns), rng)
        spread = logit_spread(model, dim)
        for scale, divisor in SCALES.items():
            c = divisor(dim)
            for n in ns:
                p = softmax(draws[:samples * n].reshape(samples, n) / c)
                row = ScalingRow(model.name, scale, dim, n, None if spread is None else spread / c,
                                 {name: estimate(v) for name, v in statistics(p).items()})
                if row.logit_sd is not None and satisfies_clt(model) \
                        and dim >= CLT_FROM_DIMENSION and limit_applies(n, row.logit_sd):
                    row.gaussian_limits = {
                        name: value for name in STATISTICS
                        if (value := large_n_limit(name, n, row.logit_sd)) is not None}
                rows.append(row)
    return rows
