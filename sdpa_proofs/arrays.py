"""A closed form in matrix entries, evaluated on measured arrays.

The exact engine answers a moment question under a general model as sums over coordinate
indices of matrix and vector entries, e.g. Var(S) = sum_ij (Sigma_qq)_ij (Sigma_kk)_ij + ...
(the trace formulas, written entrywise).  Given the matrices as NumPy arrays, each bound index
becomes an array axis and each sum a sum over its axis, so the formula is evaluated as written,
in O(d^2) for a double sum, without expanding it at a concrete d.  Anything else (a sum over
another range, an entry outside 1..d, a function with no real value there) is refused, never
guessed.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Expr, IndexedBase, Symbol

from .errors import UnsupportedExpression

#: the functions evaluated, each by its NumPy namesake (same definition, real arguments)
FUNCTIONS = {sp.exp: np.exp, sp.log: np.log, sp.floor: np.floor, sp.ceiling: np.ceil,
             sp.sign: np.sign}


def array_value(expr: Expr, arrays: dict[IndexedBase, np.ndarray],
                scalars: dict[Symbol, float], dimension: Symbol) -> float:
    """The value of ``expr`` with each IndexedBase entry taken from ``arrays`` (indices 1..d),
    each symbol from ``scalars`` and ``dimension`` the arrays' common length d."""
    arrays = {base: np.asarray(array, dtype=float) for base, array in arrays.items()}
    size = _dimension(arrays, scalars, dimension)
    bound = sorted({limit[0] for s in expr.atoms(sp.Sum) for limit in s.limits}, key=str)
    if size ** len(bound) > MAX_ELEMENTS:
        raise UnsupportedExpression(f"{len(bound)} sums over {size} coordinates: too many terms "
                                    "to evaluate on arrays")
    free = expr.free_symbols & set(bound)
    if free:
        raise UnsupportedExpression(f"{expr} depends on an index it does not sum over: "
                                    f"{', '.join(map(str, sorted(free, key=str)))}")
    evaluator = _Evaluator(arrays, {**scalars, dimension: size}, size, dimension,
                           {x: n for n, x in enumerate(bound)})
    with np.errstate(all="ignore"):
        result = np.asarray(evaluator(expr), dtype=float)
    if result.size != 1:
        raise UnsupportedExpression(f"{expr} depends on an index it does not sum over")
    return float(result.reshape(-1)[0])


MAX_ELEMENTS = 10 ** 8  # the largest array a formula's sums may spread over


def _dimension(arrays: dict, scalars: dict, dimension: Symbol) -> int:
    """d: the arrays' common length (each array d, d x d, ...), or the value given for it."""
    shapes = {array.shape for array in arrays.values()}
    lengths = {n for shape in shapes for n in shape}
    if len(lengths) > 1 or any(len(shape) == 0 for shape in shapes):
        raise UnsupportedExpression(f"the arrays are not all d, d x d, ...: shapes "
                                    f"{sorted(shapes)}")
    if lengths:
        return lengths.pop()
    if dimension not in scalars:
        raise UnsupportedExpression(f"no value for the dimension {dimension}")
    value = scalars[dimension]
    if not (float(value).is_integer() and 1 <= value <= MAX_ELEMENTS):
        raise UnsupportedExpression(f"{dimension} = {value}: a dimension is a positive integer "
                                    f"(at most {MAX_ELEMENTS})")
    return int(value)


class _Evaluator:
    """Evaluates an expression to an array with one axis per bound index (length 1 where the
    expression does not depend on it), so that products and sums broadcast."""

    def __init__(self, arrays: dict, scalars: dict, size: int, dimension: Symbol, axes: dict):
        self.arrays, self.scalars, self.size, self.axes = arrays, scalars, size, axes
        self.dimension = dimension
        self.shape = (1,) * len(axes)

    def __call__(self, expr: Expr):
        """The value of ``expr``: every intermediate value a finite real number, or refused
        (an infinity or NaN could otherwise vanish in a later step, as exp(-inf) = 0)."""
        value = self._value(expr)
        if not np.all(np.isfinite(value)):
            raise UnsupportedExpression(f"{expr} has no finite real value on these arrays")
        return value

    def _value(self, expr: Expr):
        if expr.is_Number:
            if not expr.is_real:
                raise UnsupportedExpression(f"{expr} is not a real number")
            return float(expr)
        if isinstance(expr, Symbol):
            return self._symbol(expr)
        if isinstance(expr, sp.Indexed):
            return self._entry(expr)
        if isinstance(expr, sp.Add):
            return sum(self(term) for term in expr.args)
        if isinstance(expr, sp.Mul):
            return np.prod(np.broadcast_arrays(*(self(f) for f in expr.args)), axis=0)
        if isinstance(expr, sp.Pow):
            return np.power(self(expr.base), self(expr.exp))
        if isinstance(expr, sp.Sum):
            return self._sum(expr)
        if isinstance(expr, sp.KroneckerDelta):
            a, b = (self(index) for index in expr.args)
            if not (np.all(a == np.round(a)) and np.all(b == np.round(b))):
                raise UnsupportedExpression(f"{expr}: a Kronecker delta of indices takes "
                                            "integers")
            return np.equal(a, b).astype(float)
        if expr.func in FUNCTIONS:
            return FUNCTIONS[expr.func](*(self(a) for a in expr.args))
        raise UnsupportedExpression(f"cannot evaluate {type(expr).__name__} on arrays: {expr}")

    def _symbol(self, symbol: Symbol):
        if symbol in self.axes:  # a bound index: its value 1..d along its axis
            shape = [1] * len(self.axes)
            shape[self.axes[symbol]] = self.size
            # as floats: integer powers of indices would wrap around in int64
            return np.arange(1, self.size + 1, dtype=float).reshape(shape)
        if symbol not in self.scalars:
            raise UnsupportedExpression(f"no value for {symbol}")
        return float(self.scalars[symbol])

    def _entry(self, entry: sp.Indexed):
        if entry.base not in self.arrays:
            raise UnsupportedExpression(f"no array for {entry.base}")
        array = self.arrays[entry.base]
        if array.ndim != len(entry.indices):
            raise UnsupportedExpression(f"{entry} has {len(entry.indices)} indices; the array "
                                        f"of {entry.base} has {array.ndim}")
        positions = [np.asarray(self(index)) for index in entry.indices]
        if any(not np.all((p >= 1) & (p <= self.size) & (p == np.round(p)))
               for p in positions):
            raise UnsupportedExpression(f"{entry} reaches outside the entries 1..{self.size}")
        positions = [p.astype(int) - 1 for p in positions]
        return array[tuple(np.broadcast_arrays(*positions))]

    def _sum(self, expr: sp.Sum):
        for index, low, high in expr.limits:
            if low != 1 or high != self.dimension:
                raise UnsupportedExpression(f"a sum over {index} from {low} to {high}: only "
                                            f"sums over 1..{self.dimension} are evaluated on "
                                            "arrays")
        summand = self(expr.function)
        shape = list(np.broadcast_shapes(self.shape, np.shape(summand)))
        for index, *_ in expr.limits:  # the summand spread along every axis the sum binds
            shape[self.axes[index]] = self.size
        body = np.broadcast_to(summand, tuple(shape))
        for index, *_ in expr.limits:
            body = body.sum(axis=self.axes[index], keepdims=True)
        return body
