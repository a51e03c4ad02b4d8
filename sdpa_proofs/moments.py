"""The exact moment engine: closed forms for symbolic d under a model.

It never looks at how a derivation rewrote anything: it takes an expression as written, expands
powers of sums into sums over index tuples and counts index coincidences (see ``indexing``), and
asks the model for the joint moments of distinct coordinates.
"""

from __future__ import annotations

import sympy as sp
from sympy import Expr

from .concrete import substitute_free
from .expressions import (
    SD,
    SUMS,
    Cov,
    E,
    SumOverDistinct,
    Var,
    bound_renamed_apart,
    index_symbols,
    is_random_coordinate,
    random_coordinates,
)
from .indexing import (
    Block,
    UnsupportedExpression,
    expand_terms,
    free_index_cases,
    sum_over_patterns,
)
from .models import Model, isserlis_moment
from .realnumbers import put_in
from .symbols import in_every_range
from .text import show


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
        fixed = fixed or {}
        expr = _merge_coinciding(_decide_deltas(moments_as_expectations(expr), fixed), fixed,
                                 self.model.dimension)
        return self._value(expr, fixed)

    def _value(self, expr: Expr, fixed: dict) -> Expr:
        if self.model.index_generic:
            return self._generic_value(expr)
        total = sp.S.Zero
        for term in expand_terms(expr, self.model.dimension,
                                 lambda e: isinstance(e, E) or self._is_index_delta(e)):
            coeff = self._coefficient(term.coeff, fixed)
            total += coeff * sum_over_patterns(term, fixed, self.model.dimension,
                                               self._product_of_expectations)
        return sp.expand(total)

    def _generic_value(self, expr: Expr) -> Expr:
        """For models whose moments depend on the index values (a general covariance matrix):
        moments by Isserlis with symbolic indices, valid whether or not indices coincide, so
        the sums stay symbolic and nothing needs counting."""
        total = sp.S.Zero
        for term in expand_terms(expr, self.model.dimension,
                                 lambda e: isinstance(e, E) or _is_entry(e)):
            body = sp.Mul(*(self._generic_expectation(f.args[0]) if isinstance(f, E) else f
                            for f in term.factors))
            total += self._coefficient(term.coeff, {}) * _resum(term, body, self.model.dimension)
        return total

    def _generic_expectation(self, x: Expr) -> Expr:
        total = sp.S.Zero
        for term in expand_terms(x, self.model.dimension, lambda e: is_random_coordinate(e)
                                 or isinstance(e, E) or _is_entry(e)):
            coordinates = [f for f in term.factors if is_random_coordinate(f)]
            inner = sp.Mul(*(self._generic_expectation(f.args[0]) if isinstance(f, E) else f
                             for f in term.factors if not is_random_coordinate(f)))
            moment = isserlis_moment(coordinates, self.model.mean,
                                     lambda a, b: self.model.covariance(a, b, None))
            total += term.coeff * _resum(term, inner * moment, self.model.dimension)
        return total

    def _coefficient(self, coeff: Expr, fixed: dict) -> Expr:
        """A factor left whole by the expansion (a log, a negative power): its arguments are
        evaluated in turn, so that E[.] and sums inside it get their closed forms."""
        if not coeff.has(E, *SUMS):
            return coeff
        if isinstance(coeff, sp.Mul):
            return sp.Mul(*(self._coefficient(a, fixed) for a in coeff.args))
        if any(isinstance(a, sp.Tuple) for a in coeff.args):  # a max over l, a limit: binds
            raise UnsupportedExpression(f"{show(coeff)}: the exact engine does not evaluate E[...] "
                                        "under a construct that binds an index")
        args = [self._value(a, fixed) for a in coeff.args]
        try:
            return coeff.func(*args)
        except (ValueError, TypeError) as error:  # Max(0, 1/E[q_1]) is Max(0, zoo): no value
            raise UnsupportedExpression(f"{show(coeff)}: in closed form its arguments are "
                                        f"{', '.join(map(str, args))}, of which SymPy finds no "
                                        f"value ({error})") from error

    def _is_index_delta(self, expr: Expr) -> bool:
        """delta_{ij} of two indices, each a symbol other than a size (the dimension, n) or an
        integer in 1..dimension for every dimension (sum_i delta_{i5} is 0 for d < 5): in a
        pattern of coinciding indices it is 1 or 0, as a moment of theirs is one value."""
        return isinstance(expr, sp.KroneckerDelta) and all(
            in_every_range(x, self.model.dimension) for x in expr.args)

    def _product_of_expectations(self, factors: tuple, assignment: dict) -> Expr:
        result = sp.S.One
        for factor in factors:
            if isinstance(factor, sp.KroneckerDelta):
                first, second = (assignment.get(x, Block(("value", x))) for x in factor.args)
                if first != second:
                    return sp.S.Zero
                continue
            result *= self.expectation(_pin_indices(factor.args[0], assignment))
        return result

    def expectation(self, x: Expr) -> Expr:
        """E[x] where the free indices of x are pairwise distinct coordinates."""
        if x not in self._expectations:
            _indices_only_as_subscripts(x)
            fixed = {s: Block(("value", s)) for s in index_symbols(x)}
            total = sp.S.Zero
            for term in expand_terms(x, self.model.dimension,
                                     lambda e: is_random_coordinate(e) or isinstance(e, E)
                                     or is_exponential(e)):
                if not term.coeff.is_number and term.coeff.has(sp.Indexed):
                    raise UnsupportedExpression(f"E[{show(x)}]: {show(term.coeff)} is not a "
                                                "polynomial in the coordinates")
                total += term.coeff * sum_over_patterns(term, fixed, self.model.dimension,
                                                        self._monomial)
            self._expectations[x] = sp.expand(total)
        return self._expectations[x]

    def _monomial(self, factors: tuple, assignment: dict) -> Expr:
        blocks: dict = {}  # block -> {vector: power}
        tilts: dict = {}  # block -> {vector: t} for the factor e^(t v_block)
        result = sp.S.One
        for factor in factors:
            if isinstance(factor, E):
                result *= self.expectation(_pin_indices(factor.args[0], assignment))
                continue
            if is_exponential(factor):
                constant, linear = _linear_in_coordinates(factor.args[0])
                result *= sp.exp(constant)
                for coordinate, t in linear.items():
                    block = _block_of(coordinate, assignment)
                    blocks.setdefault(block, {})
                    tilt = tilts.setdefault(block, {})
                    tilt[coordinate.base] = tilt.get(coordinate.base, 0) + t
                continue
            powers = blocks.setdefault(_block_of(factor, assignment), {})
            powers[factor.base] = powers.get(factor.base, 0) + 1
        order = list(blocks)
        return result * self.model.joint_moment([blocks[b] for b in order],
                                                [tilts.get(b, {}) for b in order])


def _decide_deltas(expr: Expr, fixed: dict) -> Expr:
    """delta_{ij} for free indices whose case is fixed: 1 in the same block, 0 in different
    ones (the case i = j of a statement E[q_i q_j] = sigma^2 delta_ij)."""
    def decided(delta: Expr) -> Expr:
        a, b = (fixed.get(x, Block(("value", x)) if x.is_Integer else None)
                for x in delta.args)
        if a is None or b is None:
            return delta
        return sp.S.One if a == b else sp.S.Zero
    return expr.replace(lambda e: isinstance(e, sp.KroneckerDelta), decided)


def _indices_only_as_subscripts(x: Expr) -> None:
    """The counting treats every index tuple of one coincidence pattern alike, so an index may
    name coordinates but not be a number in the expression (E[j q_j^2] depends on j itself)."""
    indices = index_symbols(x)
    bare = x.replace(lambda e: isinstance(e, sp.Indexed | sp.KroneckerDelta),
                     lambda e: sp.Dummy())
    used = bare.free_symbols & indices
    if used:
        raise UnsupportedExpression(f"E[{show(x)}]: the index {', '.join(map(str, used))} is used "
                                    "as a number, not only as a subscript")


def is_exponential(expr: Expr) -> bool:
    """e^(...) of an expression in the random coordinates."""
    return isinstance(expr, sp.exp) and bool(random_coordinates(expr.args[0]))


def _block_of(coordinate: Expr, assignment: dict) -> Block:
    (index,) = coordinate.indices
    return assignment.get(index, Block(("value", index)))


def _linear_in_coordinates(exponent: Expr) -> tuple[Expr, dict]:
    """exponent = constant + sum_c t_c c over random coordinates c, or UnsupportedExpression."""
    constant, linear = sp.S.Zero, {}
    for term in sp.Add.make_args(sp.expand(exponent)):
        coordinates = [f for f in sp.Mul.make_args(term) if is_random_coordinate(f)]
        rest = term / coordinates[0] if len(coordinates) == 1 else term
        if len(coordinates) > 1 or random_coordinates(rest):
            raise UnsupportedExpression(f"E[e^({show(exponent)})]: the exponent is not linear in "
                                        "the coordinates")
        if coordinates:
            linear[coordinates[0]] = linear.get(coordinates[0], 0) + rest
        else:
            constant += term
    return constant, linear


def exact_cases(before: Expr, after: Expr, model: Model, distinct: frozenset = frozenset()):
    """Closed forms of both sides in every case of coinciding free indices:
    yields (case: index -> Block, value of before, value of after)."""
    evaluator = ExactEvaluator(model)
    for case in free_index_cases([before, after], distinct):
        yield case, evaluator.value(before, case), evaluator.value(after, case)


def _is_entry(expr: Expr) -> bool:
    """A deterministic indexed quantity: an entry of a covariance matrix or mean vector."""
    return isinstance(expr, sp.Indexed) and not is_random_coordinate(expr)


def _merge_coinciding(expr: Expr, case: dict, dimension: Expr) -> Expr:
    """In a case where free indices coincide, write each block as one index: as its value
    where the block is an integer (in the case i = 5, the i of a coefficient i - 5 is 5 too,
    and δ_{i5}(i - 5) is 0), as the dimension where the block holds it (a sum up to d stays
    one up to d), else as the first of its indices.  Only free occurrences: a sum's own index
    keeps its name inside it, and one named like the index put in is renamed first, so that
    sum_i E[q_i q_j] in the case i = j does not become sum_i E[q_i^2] (review round 75)."""
    representative = {block: block.label[1] for block in case.values()
                      if block.label[0] == "value"}
    if representative.get(case.get(dimension)) is not None and expr.has(*SUMS):  # δ(d, 7)
        raise UnsupportedExpression(f"the case {dimension} = {representative[case[dimension]]}"
                                    f" (where an index or δ compares {dimension} with a number): "
                                    f"the exact engine evaluates for every {dimension} at once, "
                                    "not at one")
    if dimension in case:
        representative.setdefault(case[dimension], dimension)
    for index in sorted(case, key=sp.default_sort_key):
        representative.setdefault(case[index], index)
    merged = {index: representative[block] for index, block in case.items()
              if index != representative[block]}
    if not merged:
        return expr
    apart = bound_renamed_apart(expr, {x for x in merged.values() if x.is_Symbol})
    return put_in(apart, merged, substitute_free)


def _resum(term, body: Expr, dimension: Expr) -> Expr:
    """sum over the term's bound indices (with its i != j constraint, if any) of ``body``."""
    (pair,) = term.distinct or (frozenset(),)
    if len(term.distinct) > 1 or (pair and not pair <= set(term.bound)):
        raise UnsupportedExpression("more than one i != j constraint in one term")
    plain = [index for index in term.bound if index not in pair]
    body = sp.Sum(body, *((index, 1, dimension) for index in plain)) if plain else body
    if pair:
        i, j = sorted(pair, key=sp.default_sort_key)
        body = SumOverDistinct(body, i, j, dimension)
    return body


def _pin_indices(x: Expr, assignment: dict) -> Expr:
    """Replace the indices of x by one symbol (or integer) per block of ``assignment``."""
    names = {block: block.label[1] for block in assignment.values() if block.label[0] == "value"}
    taken = {str(name) for name in names.values()} | {str(s) for s in x.atoms(sp.Symbol)}
    counter = 0
    for block in assignment.values():
        if block not in names:
            while f"_b{counter}" in taken:
                counter += 1
            names[block] = sp.Symbol(f"_b{counter}", integer=True, positive=True)
            taken.add(f"_b{counter}")
    return x.xreplace({index: names[block] for index, block in assignment.items()})
