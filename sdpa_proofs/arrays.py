"""A closed form in matrix entries, evaluated on measured arrays.

The exact engine answers a moment question under a general model as sums over coordinate
indices of matrix and vector entries, e.g. Var(S) = sum_ij (Sigma_qq)_ij (Sigma_kk)_ij + ...
(the trace formulas, written entrywise).  Given the matrices as NumPy arrays, each bound index
becomes an array axis and each sum a sum over its axis, so the formula is evaluated as written,
in O(d^2) for a double sum, without expanding it at a concrete d.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy import Expr, IndexedBase, Symbol

from .errors import UnsupportedExpression


def array_value(expr: Expr, arrays: dict[IndexedBase, np.ndarray],
                scalars: dict[Symbol, float], dimension: Symbol) -> float:
    """The value of ``expr`` with each IndexedBase entry taken from ``arrays`` (indices 1..d),
    each symbol from ``scalars`` and ``dimension`` the arrays' common length d."""
    lengths = {array.shape[0] for array in arrays.values()}
    if len(lengths) > 1:
        raise ValueError(f"the arrays have different lengths {sorted(lengths)}")
    size = lengths.pop() if lengths else int(scalars[dimension])
    values = {**scalars, dimension: size}
    bound = sorted({limit[0] for s in expr.atoms(sp.Sum) for limit in s.limits}, key=str)
    evaluator = _Evaluator(arrays, values, size, {x: n for n, x in enumerate(bound)})
    result = np.asarray(evaluator(expr), dtype=float)
    if result.size != 1:
        raise UnsupportedExpression(f"{expr} depends on an index it does not sum over")
    return float(result.reshape(-1)[0])


class _Evaluator:
    """Evaluates an expression to an array with one axis per bound index (length 1 where the
    expression does not depend on it), so that products and sums broadcast."""

    def __init__(self, arrays: dict, scalars: dict, size: int, axes: dict):
        self.arrays, self.scalars, self.size, self.axes = arrays, scalars, size, axes
        self.shape = (1,) * len(axes)

    def __call__(self, expr: Expr):
        if expr.is_Number:
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
            return np.equal(a, b).astype(float)
        if isinstance(expr, sp.Function) and hasattr(np, expr.func.__name__):
            return getattr(np, expr.func.__name__)(*(self(a) for a in expr.args))
        raise UnsupportedExpression(f"cannot evaluate {type(expr).__name__} on arrays: {expr}")

    def _symbol(self, symbol: Symbol):
        if symbol in self.axes:  # a bound index: its value 1..d along its axis
            shape = [1] * len(self.axes)
            shape[self.axes[symbol]] = self.size
            return np.arange(1, self.size + 1).reshape(shape)
        if symbol not in self.scalars:
            raise UnsupportedExpression(f"no value for {symbol}")
        return float(self.scalars[symbol])

    def _entry(self, entry: sp.Indexed):
        if entry.base not in self.arrays:
            raise UnsupportedExpression(f"no array for {entry.base}")
        positions = [np.asarray(self(index)).astype(int) - 1 for index in entry.indices]
        return self.arrays[entry.base][tuple(np.broadcast_arrays(*positions))] \
            if len(positions) > 1 else self.arrays[entry.base][positions[0]]

    def _sum(self, expr: sp.Sum):
        summand = self(expr.function)
        shape = list(np.broadcast_shapes(self.shape, np.shape(summand)))
        for index, *_ in expr.limits:  # the summand spread along every axis the sum binds
            shape[self.axes[index]] = self.size
        body = np.broadcast_to(summand, tuple(shape))
        for index, low, high in reversed(expr.limits):
            if (self(low), self(high)) != (1, self.size):
                raise UnsupportedExpression(f"a sum over {index} from {low} to {high}: only sums "
                                            "over the coordinates 1..d are evaluated on arrays")
            body = body.sum(axis=self.axes[index], keepdims=True)
        return body
