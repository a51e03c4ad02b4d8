"""Judging a claim from batch estimates: each moment estimated on BATCHES interleaved batches
of the samples, the batches' spread as the standard error, and the checks that make that
spread an honest error bar (enough effective samples, a formula nearly linear and finite over
the estimates' range).
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp
from sympy import Expr

from .expressions import SD, Cov, E
from .samplevalues import UnsupportedForSampling, as_double
from .text import show
from .verdicts import NOT_APPLICABLE, MonteCarloResult

BATCHES = 20
T_95 = 2.093  # Student t quantile, 19 degrees of freedom
TOLERANCE_SE = 4.0  # a claim fails when the estimate is more than this many standard errors off


def _told_apart(a: float, b: float) -> tuple[str, str]:
    """a and b to six digits, or to as many as it takes to show them different (34.2857 and
    34.2857 said nothing of how they differ)."""
    for digits in (6, 10, 17):
        shown = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return shown


def _in_errors(offset: float, error: float) -> str:
    return f"{offset / error:.1f}" if error else "infinitely many"


def batch_statistic(atom: Expr, values: list[np.ndarray], batch: slice) -> float:
    """The sample version of E, Var, sd or Cov on one batch of the samples."""
    first = values[0][batch]
    if isinstance(atom, E):
        return float(np.mean(first))
    with np.errstate(under="ignore"):
        spread = float(np.cov(first, values[1][batch])[0, 1]) if isinstance(atom, Cov) \
            else float(np.var(first, ddof=1))
    if abs(spread) < np.finfo(float).tiny and np.ptp(first) > 0:  # squares of 10^-170
        raise UnsupportedForSampling(f"{show(atom)} falls below double precision (underflow)")
    return spread if not isinstance(atom, SD) else float(np.sqrt(spread))



UNIT_ROUNDOFF = 2.0**-53


def roundings(expr: Expr) -> int:
    """At most how many roundings evaluating expr in doubles makes: one per operation (k - 1
    for k terms or factors), and a sum over N terms N times its summand's and N additions."""
    if isinstance(expr, sp.Sum):
        (_, lower, upper), = expr.limits  # the sampler evaluates no nested or open sums
        return int(upper - lower + 1) * (roundings(expr.function) + 1)
    if not expr.args or isinstance(expr, sp.Indexed):
        return 0
    return max(1, len(expr.args) - 1) + sum(roundings(a) for a in expr.args)


def rounding_of(expr: Expr, size: float) -> float:
    """How far double precision may have moved a value of expr (a sample, or a formula around
    the moments) whose terms reach ``size``: each rounding by the unit roundoff of the terms,
    with a margin of two."""
    return 2 * (roundings(expr) + 1) * UNIT_ROUNDOFF * size


def moved_by_rounding(atom: Expr, values: list[np.ndarray], errors: list[float]) -> float:
    """How far the sample version of the moment may lie from that of the exact samples, each
    sample within its argument's rounding r of its exact value: a mean by r, an sd by r (the sd
    of the errors), a variance by 2 sd r + r^2, a covariance by sd_x r_y + sd_y r_x + r_x r_y;
    and by the rounding of the average itself, log2(n) + 4 unit roundoffs of its terms."""
    averaging = (np.log2(max(len(values[0]), 2)) + 4) * UNIT_ROUNDOFF
    if isinstance(atom, (E, SD)):
        return errors[0] + averaging * float(np.mean(np.abs(values[0])))
    spreads = [float(np.std(v)) for v in values]
    if isinstance(atom, Cov):
        (sx, sy), (rx, ry) = spreads, errors
        return sx * ry + sy * rx + rx * ry + averaging * sx * sy
    return 2 * spreads[0] * errors[0] + errors[0] ** 2 + averaging * spreads[0] ** 2


def not_judged(dim: int, n: int, why: str) -> MonteCarloResult:
    return MonteCarloResult(dim, n, *[float("nan")] * 4, NOT_APPLICABLE, f"not judged: {why}")


def pooled(atom: Expr, batches: np.ndarray) -> float:
    """A moment from all batches at once: the mean of the batch estimates, but for sd the root
    of the mean variance (the mean of batch roots is low by Jensen, and over 256 such atoms
    the lows added up to 5 standard errors)."""
    if isinstance(atom, SD):
        return float(np.sqrt(np.mean(np.square(batches))))
    return float(batches.mean())


def estimate_range(estimates: np.ndarray, nonnegative: bool) -> mpmath.iv.mpf:
    """Where a moment's estimates may fall: their range, widened by half of it either way
    (a variance not below 0)."""
    low, high = float(estimates.min()), float(estimates.max())
    margin = (high - low) / 2
    return mpmath.iv.mpf([max(low - margin, 0.0) if nonnegative else low - margin,
                          high + margin])


def finite_over(expr: Expr, boxes: dict) -> bool:
    """Whether expr is finite and real for all values of its symbols in ``boxes`` (mpmath's
    interval arithmetic, which encloses every value: 1/x over an interval holding 0 is
    (-oo, oo)); False for what it cannot enclose."""
    try:
        value = _enclosure(expr, boxes)
    except (ArithmeticError, ValueError, TypeError, UnsupportedForSampling):
        return False
    return isinstance(value, mpmath.iv.mpf) and bool(mpmath.isfinite(value.a)) \
        and bool(mpmath.isfinite(value.b))


def _enclosure(expr: Expr, boxes: dict):
    if expr in boxes:
        return boxes[expr]
    if expr.is_number:
        return mpmath.iv.mpf(as_double(expr))
    if isinstance(expr, (sp.Add, sp.Mul)):
        parts = [_enclosure(a, boxes) for a in expr.args]
        total = parts[0]
        for part in parts[1:]:
            total = total + part if isinstance(expr, sp.Add) else total * part
        return total
    if isinstance(expr, sp.Pow) and expr.exp.is_number:
        exponent = int(expr.exp) if expr.exp.is_Integer else as_double(expr.exp)
        return _enclosure(expr.base, boxes) ** exponent
    if isinstance(expr, sp.exp):
        return mpmath.iv.exp(_enclosure(expr.args[0], boxes))
    if isinstance(expr, sp.log):
        return mpmath.iv.log(_enclosure(expr.args[0], boxes))
    raise UnsupportedForSampling(f"cannot enclose {show(expr)}")


def effective_samples(atom: Expr, values: list[np.ndarray]) -> tuple[float, Expr]:
    """Kish's effective sample size (sum |w|)^2 / sum w^2 of what the moment averages, centred
    (w = x - mean for E[x], (x - mean)^2 for Var and sd, the centred product for Cov), with
    the moment: n for
    equal weights, near 1 where one draw outweighs the rest (q^20 under a Gaussian), and
    there batch means are not near normal, so their spread is no standard error."""
    first = values[0]
    weights = first - first.mean()  # centred: a constant beside q^20 would make them even
    if isinstance(atom, Cov):
        weights *= values[1] - values[1].mean()
    if isinstance(atom, (E, Cov)):
        np.abs(weights, out=weights)
    else:
        np.square(weights, out=weights)
    largest = float(np.max(weights, initial=0.0))
    if not np.isfinite(largest):
        return 0.0, atom  # beyond double precision: no sample counts
    if not largest:
        return float("inf"), atom  # all equal: nothing to be decided by a few
    weights /= largest  # (sum w)^2 of 10^320 overflows; the ratio does not change
    return float(weights.sum()) ** 2 / float(np.dot(weights, weights)), atom


MAX_BEND = 0.5  # standard errors of bias from the formula's curvature (see _Plan._bend)
MIN_EFFECTIVE_SAMPLES = 100  # 5 a batch; the catalogue's claims have at least 270


def compare(dim: int, n: int, lhs: np.ndarray, rhs: np.ndarray,
             relation: str = "==") -> MonteCarloResult:
    """Batch estimates of both sides -> the left side's interval and the verdict on lhs - rhs:
    within TOLERANCE_SE standard errors of 0 for an equation, not more than that on the wrong
    side of 0 for an inequality; a strict one must be more than that on the right side, or
    sampling cannot tell it from an equation (n/a)."""
    estimate, expected = float(lhs.mean()), float(rhs.mean())
    spread = standard_error(lhs)
    difference = lhs - rhs
    signed = float(difference.mean())
    off = {"==": abs(signed), "<=": signed, "<": signed, ">=": -signed, ">": -signed}[relation]
    error = standard_error(difference)
    if not all(np.isfinite([estimate, expected, spread, signed, error])):
        return MonteCarloResult(dim, n, estimate, float("nan"), float("nan"), expected,
                                NOT_APPLICABLE, "not judged: the estimates or their spread "
                                "lie beyond double precision")
    ok = off <= TOLERANCE_SE * error if error > 0 else off <= 1e-12 * max(1.0, abs(expected))
    shown, claimed = _told_apart(estimate, expected)
    reason = (f"estimate {shown} is {_in_errors(abs(off), error)} standard errors "
              f"from the claimed {claimed}"
              + ("" if relation == "==" else f" on the wrong side of {relation}"))
    status = "pass" if ok else "fail"
    if relation in ("<", ">") and abs(signed) <= 1e-9 * max(abs(estimate), abs(expected)):
        # equal to within rounding (e^a e^b against e^(a + b)): not strictly apart
        status, reason = "fail", (f"the sides are equal to within rounding ({estimate:.12g} "
                                  f"and {expected:.12g}): not strictly {relation}")
    elif ok and relation in ("<", ">") and -off <= TOLERANCE_SE * error:
        # E[q^2] < sigma^2 and E[q^2] > sigma^2 both lie within any test's error of equal
        status, reason = NOT_APPLICABLE, (
            f"not judged: the sides are {_in_errors(abs(off), error)} standard errors apart, "
            f"within sampling error: sampling cannot tell {relation} from =")
    return MonteCarloResult(
        dim, n, estimate, estimate - T_95 * spread, estimate + T_95 * spread, expected,
        status, "" if status == "pass" else reason)


def standard_error(batches: np.ndarray) -> float:
    """The standard error of the batches' mean, computed on the batches scaled to at most 1
    (the squares of values of 10^160 overflow, and an infinite error passes anything)."""
    scale = float(np.max(np.abs(batches)))
    if not scale or not np.isfinite(scale):
        return 0.0 if not scale else float("nan")
    return float((batches / scale).std(ddof=1) / np.sqrt(BATCHES)) * scale
