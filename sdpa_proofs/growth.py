"""How Var(S), E[S^2] and the within-row spread grow with d under each model: log-log slopes,
exact and sampled.

Var(S) and E[S^2] are statistics of one logit; softmax sees the differences of the logits of a
row, whose size is the within-row spread E[(S - S~)^2] / 2 for two keys k, k~ of one query
(``LatentLinearModel.with_second_key``: what the query loads on is common to the row).  It is
sampled from rows, one query and two keys per draw.

The exact slope is the least-squares slope of log(closed form) against log d over the same
dimensions the Monte Carlo uses, so the two are comparable at finite d (a d^2 + b d has a slope
a little under 2).  The Monte Carlo slope is fitted per batch of samples; the spread of the batch
slopes gives its standard error and interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy import Expr

from .batches import BATCHES, T_95, TOLERANCE_SE
from .expressions import E, Var
from .models import LatentLinearModel, Model
from .moments import ExactEvaluator
from .montecarlo import draw_samples, samples_for
from .samplevalues import vector_values
from .symbols import dot_product, k, other_dot_product, q
from .text import show
from .verdicts import NOT_APPLICABLE

DIMENSIONS = (16, 64, 256, 1024, 4096)
ROW_SPREAD = E((dot_product - other_dot_product)**2) / 2
STATISTICS = {"Var(S)": Var(dot_product), "E[S²]": E(dot_product**2),
              "E[(S−S̃)²]/2": ROW_SPREAD}


@dataclass
class GrowthRow:
    model: str
    statistic: str
    closed_form: str
    exact_slope: float
    slope: float
    ci_low: float
    ci_high: float
    status: str


def log_slope(dims, values) -> float:
    """Least-squares slope of log(values) against log(dims)."""
    return float(np.polyfit(np.log(dims), np.log(values), 1)[0])


def _batch_statistic(statistic: Expr, samples: np.ndarray, difference: np.ndarray) -> np.ndarray:
    """The statistic on each batch: Var or E of the square of S, or half the mean square of
    the difference of two logits of a row."""
    if statistic is ROW_SPREAD:
        return np.array([np.mean(difference[b::BATCHES]**2) / 2 for b in range(BATCHES)])
    batches = [samples[b::BATCHES] for b in range(BATCHES)]
    if isinstance(statistic, Var):
        return np.array([np.var(x, ddof=1) for x in batches])
    return np.array([np.mean(x**2) for x in batches])


def growth(model: Model, dims=DIMENSIONS, seed: int = 2026,
           budget: float = 1.6e7) -> list[GrowthRow]:
    """Exact and Monte Carlo log-log slopes of Var(S), E[S^2] and (for a model of latent
    variables) the within-row spread against d under ``model``."""
    if not {q, k} <= set(model.vectors):  # logits given directly: there is no S = q . k
        return [GrowthRow(model.name, name, f"no q . k under {model.name}",
                          *[float("nan")] * 4, NOT_APPLICABLE) for name in STATISTICS]
    if model.index_generic:  # closed forms are sums of matrix entries, not functions of d
        return [GrowthRow(model.name, name, "sums of covariance entries", *[float("nan")] * 4,
                          NOT_APPLICABLE) for name in STATISTICS]
    rowed = model.with_second_key() if isinstance(model, LatentLinearModel) else None
    statistics = {name: x for name, x in STATISTICS.items() if rowed or x is not ROW_SPREAD}
    sampled = rowed or model
    point = model.parameter_points[0]
    evaluator = ExactEvaluator(sampled)
    estimates = {name: [] for name in statistics}
    for dim in dims:
        n = samples_for(dim, budget)
        arrays = draw_samples(sampled, dim, point, n, seed)
        concrete = {model.dimension: sp.Integer(dim)}
        samples = vector_values(dot_product.xreplace(concrete), arrays, dim)
        difference = samples - vector_values(other_dot_product.xreplace(concrete), arrays, dim) \
            if rowed else None
        for name, statistic in statistics.items():
            estimates[name].append(_batch_statistic(statistic, samples, difference))
    rows = []
    for name, statistic in statistics.items():
        closed = sp.factor(evaluator.value(statistic))
        form = show(sp.collect(sp.expand(closed), model.dimension))
        exact = [float(closed.xreplace({**point, model.dimension: dim})) for dim in dims]
        if min(exact) <= 0:  # e.g. Var(S) = 0 when k is a multiple of a Rademacher q
            rows.append(GrowthRow(model.name, name, form, *[float("nan")] * 4, NOT_APPLICABLE))
            continue
        exact_slope = log_slope(dims, exact)
        per_batch = np.array(estimates[name])  # (len(dims), BATCHES)
        slopes = np.array([log_slope(dims, per_batch[:, b]) for b in range(BATCHES)])
        slope, error = float(slopes.mean()), float(slopes.std(ddof=1) / np.sqrt(BATCHES))
        # a statistic without randomness (k a multiple of a Rademacher q: S = d sigma_q
        # sigma_k) has no spread at all: agreement then means agreement to rounding
        agrees = abs(slope - exact_slope) <= TOLERANCE_SE * error + 1e-9
        rows.append(GrowthRow(model.name, name, form, exact_slope, slope, slope - T_95 * error,
                              slope + T_95 * error, "pass" if agrees else "fail"))
    return rows
