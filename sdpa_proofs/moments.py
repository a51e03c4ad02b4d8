"""The exact moment engine: closed forms for symbolic d under a model.

It never looks at how a derivation rewrote anything: it takes an expression as written, expands
powers of sums into sums over index tuples and counts index coincidences (see ``indexing``), and
asks the model for the joint moments of distinct coordinates.
"""

from __future__ import annotations

import sympy as sp
from sympy import Expr

from .expressions import SD, Cov, E, Var, index_symbols, is_random_coordinate
from .indexing import (
    Block,
    UnsupportedExpression,
    expand_terms,
    free_index_cases,
    sum_over_patterns,
)
from .models import Model


def moments_as_expectations(expr: Expr) -> Expr:
    """Var(X) = E[X^2] - E[X]^2, sd(X) = sqrt(Var(X)), Cov(X, Y) = E[XY] - E[X]E[Y]:
    everything in terms of E."""
    if not expr.args:
        return expr
    args = [moments_as_expectations(a) for a in expr.args]
    if isinstance(expr, Var):
        (x,) = args
        return E(sp.expand(x ** 2)) - E(x) ** 2
    if isinstance(expr, SD):
        (x,) = args
        return sp.sqrt(E(sp.expand(x ** 2)) - E(x) ** 2)
    if isinstance(expr, Cov):
        x, y = args
        return E(sp.expand(x * y)) - E(x) * E(y)
    return expr.func(*args)


class ExactEvaluator:
    """Evaluates expressions built from E, Var, sd and sums to closed forms under ``model``."""

    def __init__(self, model: Model):
        self.model = model
        self._expectations: dict = {}

    def value(self, expr: Expr, fixed: dict | None = None) -> Expr:
        """Closed form of ``expr`` when its free indices take the pairwise-distinct-by-block
        values ``fixed`` (index -> Block)."""
        return self._value(moments_as_expectations(expr), fixed or {})

    def _value(self, expr: Expr, fixed: dict) -> Expr:
        total = sp.S.Zero
        for term in expand_terms(expr, self.model.dimension, lambda e: isinstance(e, E)):
            coeff = self._coefficient(term.coeff, fixed)
            total += coeff * sum_over_patterns(term, fixed, self.model.dimension,
                                               self._product_of_expectations)
        return sp.expand(total)

    def _coefficient(self, coeff: Expr, fixed: dict) -> Expr:
        if not coeff.has(E):
            return coeff
        if isinstance(coeff, sp.Mul):
            return sp.Mul(*(self._coefficient(a, fixed) for a in coeff.args))
        return coeff.func(*(self._value(a, fixed) for a in coeff.args))

    def _product_of_expectations(self, factors: tuple, assignment: dict) -> Expr:
        result = sp.S.One
        for factor in factors:
            result *= self.expectation(_pin_indices(factor.args[0], assignment))
        return result

    def expectation(self, x: Expr) -> Expr:
        """E[x] where the free indices of x are pairwise distinct coordinates."""
        if x not in self._expectations:
            fixed = {s: Block(("value", s)) for s in index_symbols(x)}
            total = sp.S.Zero
            for term in expand_terms(x, self.model.dimension,
                                     lambda e: is_random_coordinate(e) or isinstance(e, E)):
                if not term.coeff.is_number and term.coeff.has(sp.Indexed):
                    raise UnsupportedExpression(f"E[{x}]: {term.coeff} is not a polynomial in "
                                                "the coordinates")
                total += term.coeff * sum_over_patterns(term, fixed, self.model.dimension,
                                                        self._monomial)
            self._expectations[x] = sp.expand(total)
        return self._expectations[x]

    def _monomial(self, factors: tuple, assignment: dict) -> Expr:
        blocks: dict = {}
        result = sp.S.One
        for factor in factors:
            if isinstance(factor, E):
                result *= self.expectation(_pin_indices(factor.args[0], assignment))
                continue
            (index,) = factor.indices
            block = assignment.get(index, Block(("value", index)))
            powers = blocks.setdefault(block, {})
            powers[factor.base] = powers.get(factor.base, 0) + 1
        return result * self.model.joint_moment(list(blocks.values()))


def exact_cases(before: Expr, after: Expr, model: Model, distinct: frozenset = frozenset()):
    """Closed forms of both sides in every case of coinciding free indices:
    yields (case: index -> Block, value of before, value of after)."""
    evaluator = ExactEvaluator(model)
    for case in free_index_cases([before, after], distinct):
        yield case, evaluator.value(before, case), evaluator.value(after, case)


def _pin_indices(x: Expr, assignment: dict) -> Expr:
    """Replace the indices of x by one symbol (or integer) per block of ``assignment``."""
    names = {block: block.label[1] for block in assignment.values() if block.label[0] == "value"}
    taken = {str(name) for name in names.values()}
    counter = 0
    for block in assignment.values():
        if block not in names:
            while f"_b{counter}" in taken:
                counter += 1
            names[block] = sp.Symbol(f"_b{counter}", integer=True, positive=True)
            taken.add(f"_b{counter}")
    return x.xreplace({index: names[block] for index, block in assignment.items()})
