"""The scaling comparison: softmax(S / c) for c in {1, sqrt(d), d}, as d grows, under a model.

Softmax sees a row: one query q against n keys, the logits q.k_j / c.  Each row is drawn as the
model says (``LatentLinearModel.sample_rows``): the latents the query loads on once per row,
a key's own latents once per key.  What is common to the row cancels in the softmax, so the
statistics depend on the within-row spread sqrt(E[(S - S~)^2] / 2) / c of two logits of a row,
taken from the exact engine.  Where the model satisfies a central limit theorem (no shared
latent factor) and d is large, the logits of a row are close to n i.i.d. N(0, s^2) with s that
spread, and the Monte Carlo estimates are compared with the large-n limits for Gaussian logits
(``softmax.large_n_limit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .expressions import E
from .models import LatentLinearModel, Model
from .moments import ExactEvaluator
from .samplevalues import UnsupportedForSampling
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
from .symbols import dot_product, k, other_dot_product, q

SCALES = {"1": lambda dim: 1.0, "√d": np.sqrt, "d": float}
DIMENSIONS = (16, 64, 256, 1024, 4096)
DEFAULT_MODELS = ("independent-normal", "correlated-normal", "shared-factor")
CLT_FROM_DIMENSION = 1024  # below this the logits' non-Gaussianity is not negligible
CHUNK_COORDINATES = 2**22  # keys' coordinates per chunk of rows: 32 MiB


@dataclass
class ScalingRow:
    model: str
    scale: str
    d: int
    n: int
    logit_sd: float | None  # exact within-row spread / c, when the model has a closed form
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
    """The within-row spread sqrt(E[(S - S~)^2] / 2) of two logits of a row at dimension
    ``dim`` and the model's first parameter point, from the exact engine."""
    if not isinstance(model, LatentLinearModel):
        return None
    spread = E((dot_product - other_dot_product)**2) / 2
    closed = ExactEvaluator(model.with_second_key()).value(spread)
    return float(closed.xreplace({**model.parameter_points[0], model.dimension: dim})) ** 0.5


def draw_rows(model: Model, dim: int, rows: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` attention rows of n logits S_j = q . k_j at dimension ``dim`` (rows, n), drawn
    a few rows at a time to bound memory."""
    if not isinstance(model, LatentLinearModel) or not {q, k} <= set(model.vectors):
        raise UnsupportedForSampling(
            f"model {model.name} has no query and keys to draw rows of (rows are drawn for "
            "models of q and k built from latent variables)")
    point = model.parameter_points[0]
    chunk = max(1, CHUNK_COORDINATES // (n * dim))
    logits = []
    for start in range(0, rows, chunk):
        query, keys = model.sample_rows(rng, min(chunk, rows - start), n, dim, point)
        logits.append(np.einsum("rnd,rd->rn", keys, query))
    return np.concatenate(logits)


def scaling(model: Model, dims=DIMENSIONS, ns=(256,), samples: int = 64,
            seed: int = 2026) -> list[ScalingRow]:
    """Softmax statistics of a row's logits S_j / c for every scale c, dimension d and number
    of keys n, from ``samples`` rows (the first n keys of each for smaller n)."""
    rows = []
    for dim in dims:
        rng = np.random.default_rng([seed, dim])
        logits = draw_rows(model, dim, samples, max(ns), rng)
        spread = logit_spread(model, dim)
        for scale, divisor in SCALES.items():
            c = divisor(dim)
            for n in ns:
                p = softmax(logits[:, :n] / c)
                row = ScalingRow(model.name, scale, dim, n, None if spread is None else spread / c,
                                 {name: estimate(v) for name, v in statistics(p).items()})
                if row.logit_sd is not None and satisfies_clt(model) \
                        and dim >= CLT_FROM_DIMENSION and limit_applies(n, row.logit_sd):
                    row.gaussian_limits = {
                        name: value for name in STATISTICS
                        if (value := large_n_limit(name, n, row.logit_sd)) is not None}
                rows.append(row)
    return rows
