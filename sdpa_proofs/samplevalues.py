"""Random expressions evaluated on samples, in doubles, with the size of the terms each value
came from: what Monte Carlo computes, and what tells it when double precision cannot hold a
value (terms that cancel, overflow, underflow), so that rounding noise is refused, not judged.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Expr, Sum

from .expressions import MOMENT_FUNCTIONS, MaxOver, is_random_coordinate, random_coordinates
from .realnumbers import NoEnclosure, nearest_double
from .text import show


class UnsupportedForSampling(ValueError):
    pass


ELEMENTWISE = {sp.exp: np.exp, sp.log: np.log}


def vector_values(expr: Expr, arrays: dict, dim: int, index=None, seen: dict | None = None):
    """Samples of a random expression as a NumPy array; inside the (single, unnested) sum over
    ``index`` the arrays carry a trailing axis of length ``dim`` that the sum then adds up.
    A part found before on these arrays is taken from ``seen`` (keyed by the part and the
    index it is read along; never changed): S in S, S/d and S^2 is summed once."""
    seen = {} if seen is None else seen
    if (expr, index) not in seen:
        seen[expr, index] = _vector_values(expr, arrays, dim, index, seen)
    return seen[expr, index]


def _vector_values(expr: Expr, arrays: dict, dim: int, index, seen: dict):
    if index is not None and expr == index:  # the index as a number, as in sum_i i q_i
        return np.arange(1, dim + 1, dtype=float)
    if isinstance(expr, MOMENT_FUNCTIONS):  # a number, but not one a sample can give
        raise UnsupportedForSampling(f"a moment beside the coordinates: {show(expr)}")
    if is_random_coordinate(expr):
        (position,) = expr.indices
        if index is not None and position == index:
            return arrays[expr.base]
        if position.is_Integer:
            column = arrays[expr.base][:, int(position) - 1]
            return column if index is None else column[:, None]
        raise UnsupportedForSampling(f"free index in {show(expr)}")
    if isinstance(expr, (Sum, MaxOver)):
        if index is not None and not expr.has(index):  # e.g. a softmax normaliser in a sum
            return np.asarray(vector_values(expr, arrays, dim, None, seen))[..., None]
        if index is not None or len(expr.limits) != 1:
            raise UnsupportedForSampling(f"nested sums are not sampled: {show(expr)}")
        (bound, lower, upper), = expr.limits
        if _over_a_range(expr):
            return _over_range(expr)[0]
        if lower != 1 or not upper.is_Integer or int(upper) != dim:
            raise UnsupportedForSampling(f"sum limits of {show(expr)}")
        if isinstance(expr, Sum) and isinstance(expr.function, sp.Mul) \
                and len(expr.function.args) == 2:
            a, b = (vector_values(f, arrays, dim, bound, seen) for f in expr.function.args)
            if all(np.ndim(x) == 2 and np.shape(x)[1] == dim for x in (a, b)):
                return np.einsum("ij,ij->i", a, b)  # sum_i a_i b_i in one pass
            values = a * b
        else:
            values = vector_values(expr.function, arrays, dim, bound, seen)
        if isinstance(expr, MaxOver):
            return values if np.ndim(values) == 0 else values.max(axis=-1)
        return _summed(values, dim)
    if isinstance(expr, (sp.Add, sp.Mul)):
        parts = [vector_values(a, arrays, dim, index, seen) for a in expr.args]
        result = parts[0]
        for part in parts[1:]:
            result = result + part if isinstance(expr, sp.Add) else result * part
        return result
    if isinstance(expr, sp.Pow):
        if not expr.exp.is_number:
            raise UnsupportedForSampling(f"a random exponent: {show(expr)}")
        return vector_values(expr.base, arrays, dim, index, seen) ** as_double(expr.exp)
    if isinstance(expr, tuple(ELEMENTWISE)):
        return ELEMENTWISE[type(expr)](vector_values(expr.args[0], arrays, dim, index,
                                                                  seen))
    if isinstance(expr, sp.Symbol) and expr in arrays:  # a bound index, a moment's estimates
        return arrays[expr]
    if expr.is_number:
        return as_double(expr)
    raise UnsupportedForSampling(f"cannot sample {show(expr)}")


def as_double(number: Expr) -> float:
    """A number as the nearest double, proven by interval arithmetic (realnumbers): SymPy's
    evalf loses digits silently (it takes 1/2 - 10^70 log(1 + 10^-70) for 1/2; it is -1/2);
    refused where the enclosure cannot tell the double, or the double underflows or
    overflows (10^17 e^(10^-17) - 10^17 is 1; float() of it at 10^200 gives 10^78)."""
    try:
        value = float(number) if number.is_Rational else nearest_double(number)
    except (NoEnclosure, OverflowError) as error:
        raise UnsupportedForSampling(f"cannot evaluate {show(number)} to double precision: "
                                     f"{error}") from error
    if not np.isfinite(value) or abs(value) < np.finfo(float).tiny and number != 0:
        raise UnsupportedForSampling(f"{show(number)} lies beyond double precision (overflow or "
                                     "underflow)")
    return value


def _summed(values, dim: int):
    """A summand's samples along the index axis added up; a summand free of the index (a
    number, or q_1 in sum_i q_1, of shape (rows, 1)) is dim equal terms."""
    if np.ndim(values) == 0:
        return values * dim
    return values[..., 0] * dim if np.shape(values)[-1] == 1 else values.sum(axis=-1)


def _over_a_range(expr: Expr) -> bool:
    """A sum or maximum of a function of its index alone, over integer limits."""
    if not isinstance(expr, (Sum, MaxOver)) or len(expr.limits) != 1:
        return False
    _, lower, upper = expr.limits[0]
    return not random_coordinates(expr.function) and not expr.has(*MOMENT_FUNCTIONS) \
        and lower.is_Integer and upper.is_Integer


MAX_RANGE = 10**7  # the most terms of a sum of numbers that are added one by one


def _over_range(expr: Sum | MaxOver) -> tuple[float, float]:
    """A sum or maximum of a function of its index alone, such as max_t g(t) over t = 0..n,
    and the size of its terms (sum_t ((-1)^t 10^17 + t) is 3, 0 in doubles)."""
    (bound, lower, upper), = expr.limits
    if not 0 < int(upper) + 1 - int(lower) <= MAX_RANGE:
        raise UnsupportedForSampling(f"a range of {int(upper) + 1 - int(lower)} terms in "
                                     f"{show(expr)}")
    span = np.arange(int(lower), int(upper) + 1, dtype=float)
    values, sizes = (np.broadcast_to(x, span.shape)
                     for x in values_and_sizes(expr.function, {bound: span}, 1))
    if isinstance(expr, MaxOver):
        return float(values.max()), float(sizes.max())
    return float(values.sum()), float(sizes.sum())


def as_samples(values, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(values, dtype=float), (n,))



UNRESOLVED = 1e6  # terms this much larger than the values leave them about 1e-10 of precision


def refuse_unresolved(values, terms) -> None:
    """Samples whose terms cancel more than UNRESOLVED-fold (beyond 1) are rounding noise, and
    values beyond double precision (e^(1000 + q^2) is inf, and inf is within any margin of
    anything) are no values."""
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(terms))):
        raise UnsupportedForSampling("values or their terms beyond double precision (inf or "
                                     "nan)")
    values = np.abs(values)
    if np.any(terms > UNRESOLVED * np.maximum(values, 1)):
        raise UnsupportedForSampling(f"terms up to {np.max(terms):.3g} cancel to values of "
                                     f"{np.max(values):.3g}: more than double precision "
                                     "resolves")


def values_and_sizes(expr: Expr, arrays: dict, dim: int, index=None,
                     seen: dict | None = None) -> tuple:
    """``vector_values`` of expr, and the samples of the size of the terms it is made of (as
    algebra.term_size, sample by sample): |a| + |b| for a + b, |a| |b| for a b, the terms of a
    sum over the coordinates added up, for exp, log and powers |f(u)| plus how far f moves
    when u moves by its own error (10^20 log(1 + z^2 10^-20) is 0 in double precision, from
    terms of 10^20), and |value| for anything else.  A part met again is taken from ``seen``
    (a softmax's normaliser, e^(z_m) in it and beside it): the same arrays, never changed."""
    seen = {} if seen is None else seen
    if (expr, index) not in seen:
        seen[expr, index] = _values_and_sizes(expr, arrays, dim, index, seen)
    return seen[expr, index]


def _values_and_sizes(expr: Expr, arrays: dict, dim: int, index, seen: dict) -> tuple:
    if expr.is_number:
        value = as_double(expr)
        return value, abs(value)
    if _over_a_range(expr):
        return _over_range(expr)
    if isinstance(expr, (sp.Add, sp.Mul)):
        parts = [values_and_sizes(a, arrays, dim, index, seen) for a in expr.args]
        combine = np.add if isinstance(expr, sp.Add) else np.multiply
        value, size = parts[0]
        with np.errstate(under="ignore"):
            for part_value, part_size in parts[1:]:
                value, size = combine(value, part_value), combine(size, part_size)
        if isinstance(expr, sp.Mul):
            _no_underflow(np.abs(value), lambda: _all_nonzero(parts), expr)
        return value, size
    if isinstance(expr, (Sum, MaxOver)) and len(expr.limits) == 1 \
            and random_coordinates(expr.function) and expr.limits[0][1:] == (1, dim):
        if index is not None:  # a sum free of the outer index, as vector_values takes it
            if expr.has(index):
                raise UnsupportedForSampling(f"nested sums are not sampled: {show(expr)}")
            value, size = values_and_sizes(expr, arrays, dim, None, seen)
            return np.asarray(value)[..., None], np.asarray(size)[..., None]
        value, size = values_and_sizes(expr.function, arrays, dim, expr.limits[0][0],
                                       seen)
        if isinstance(expr, MaxOver):  # off by at most the most any term is off by
            return (value, size) if np.ndim(value) == 0 else (value.max(axis=-1),
                                                               size.max(axis=-1))
        return _summed(value, dim), _summed(size, dim)
    if not isinstance(expr, (sp.Pow, *ELEMENTWISE)) or expr.args[0].is_number \
            or isinstance(expr, sp.Pow) and not expr.exp.is_number:  # vector_values refuses
        value = vector_values(expr, arrays, dim, index)
        return value, np.abs(value)
    at, inner_size = values_and_sizes(expr.args[0], arrays, dim, index, seen)
    with np.errstate(all="ignore"):  # an overflow is an inf, which refuse_unresolved refuses
        value = at ** as_double(expr.exp) if isinstance(expr, sp.Pow) \
            else ELEMENTWISE[type(expr)](at)
        magnitude = np.abs(value)
        spread = _moved(expr, at, magnitude, inner_size * EPSILON) / EPSILON
    # e^u is never 0, nor u^p for u not 0; log u is 0 at u = 1
    if not isinstance(expr, sp.log):
        _no_underflow(magnitude, (lambda: at != 0) if isinstance(expr, sp.Pow) else
                      (lambda: True), expr)
    unknown = np.isnan(spread)
    if np.any(unknown):  # a pole where the error reaches: no size bounds the value
        spread = np.where(unknown, np.inf, spread)
    return value, np.add(magnitude, spread, out=spread if np.ndim(spread) else None)


def _all_nonzero(parts: list):
    """Whether every factor's value is not 0, sample by sample."""
    nonzero = np.True_
    for part_value, _ in parts:
        nonzero = nonzero & (np.asarray(part_value) != 0)
    return nonzero


def _no_underflow(magnitude, nonzero, expr: Expr) -> None:
    """A product of numbers that are not 0, a power of one, or an exponential, is not 0, nor
    below the smallest normal double, where digits are lost: e^(-10^14 E[q]^2) is 1, and 0 in
    doubles (as 0, it is exact to every check that follows).  ``magnitude`` is the absolute
    value; ``nonzero()`` says where it should not be 0, asked only where it is that small."""
    tiny = magnitude < np.finfo(float).tiny
    if np.any(tiny) and np.any(tiny & nonzero()):
        raise UnsupportedForSampling(f"{show(expr)} falls below double precision (underflow)")


def _moved(expr: Expr, at: np.ndarray, magnitude: np.ndarray, error: np.ndarray) -> np.ndarray:
    """How far exp, log or a power of u moves when u = ``at`` (where its value has absolute
    value ``magnitude``) moves by ``error``: the slope at the far end of the error times it
    (e^(u + e) <= e^u e^max(e), 1/u at the end nearer 0 for log and negative powers, a pole if
    that end reaches 0), and for a root u^p, 0 < p < 1, at most error^p."""
    if isinstance(expr, sp.exp):
        return magnitude * error * np.exp(np.max(error, initial=0.0))
    at = np.abs(at)
    far, near = at + error, at - error
    if isinstance(expr, sp.log):
        return np.where(near > 0, error / near, np.inf)
    power = as_double(expr.exp)  # proven: float() of 10^70 log(1 + 10^-70) is 0
    slope_power = int(power - 1) if power.is_integer() else power - 1
    if power >= 1:
        return power * far ** slope_power * error
    if power > 0:
        return np.minimum(error ** power, power * np.maximum(near, 0) ** slope_power * error)
    return np.where(near > 0, -power * near ** slope_power * error, np.inf)


EPSILON = float(np.finfo(float).eps)
