"""Sums over index tuples, evaluated exactly for a symbolic dimension d.

A polynomial in sums is expanded into terms  c * sum_{i_1..i_m in [d], constraints} f_1 ... f_r .
Such a term is evaluated by splitting the index tuples by which indices coincide: for each set
partition of the indices (respecting the i != j constraints) every factor has one value, and the
number of index tuples realising a partition with r free blocks is the falling factorial
(d - f)(d - f - 1)...(d - f - r + 1), f being the number of blocks already fixed.  This is the
seed's "d terms with i = j and d(d - 1) terms with i != j", done for any number of indices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import product

import sympy as sp
from sympy import Add, Dummy, Expr, Mul, Pow, Symbol

from .errors import UnsupportedExpression
from .expressions import SUMS, SumOverDistinct, bound_indices, index_symbols, summand
from .text import show


@dataclass(frozen=True)
class Term:
    """coeff * sum over ``bound`` (each in 1..d, pairs in ``distinct`` differ) of prod(factors)."""

    coeff: Expr
    bound: tuple[Symbol, ...] = ()
    distinct: frozenset = frozenset()
    factors: tuple[Expr, ...] = ()

    def times(self, other: Term) -> Term:
        return Term(self.coeff * other.coeff, self.bound + other.bound,
                    self.distinct | other.distinct, self.factors + other.factors)


def _fresh(term: Term) -> Term:
    """Rename the bound indices so that multiplying two terms cannot capture names."""
    renaming = {b: Dummy(b.name, integer=True, positive=True) for b in term.bound}
    return Term(term.coeff, tuple(renaming[b] for b in term.bound),
                frozenset(frozenset(renaming.get(x, x) for x in pair) for pair in term.distinct),
                tuple(f.xreplace(renaming) for f in term.factors))


MAX_EXPANDED_POWER = 64  # moments of a higher degree are beyond any step's need


def expand_terms(expr: Expr, dimension: Expr, is_factor: Callable[[Expr], bool]) -> list[Term]:
    """Expand ``expr`` into Terms whose factors are the leaves accepted by ``is_factor``.

    Index-free leaves become coefficients; every sum must run over 1..dimension.
    """
    if is_factor(expr):
        return [Term(sp.S.One, factors=(expr,))]
    if isinstance(expr, Add):
        return [t for arg in expr.args for t in expand_terms(arg, dimension, is_factor)]
    if isinstance(expr, Mul):
        terms = [Term(sp.S.One)]
        for arg in expr.args:
            parts = expand_terms(arg, dimension, is_factor)
            terms = [a.times(_fresh(b)) for a, b in product(terms, parts)]
        return terms
    if isinstance(expr, Pow) and expr.exp.is_Integer and expr.exp > 0 \
            and _needs_expansion(expr.base):
        if expr.exp > MAX_EXPANDED_POWER:  # (1 + 1/d)^(10^19): a list that long is no answer
            raise UnsupportedExpression(f"{show(expr)}: a power above {MAX_EXPANDED_POWER} is not "
                                        "expanded")
        return expand_terms(Mul(*([expr.base] * int(expr.exp)), evaluate=False), dimension,
                            is_factor)
    if isinstance(expr, SUMS):
        return _sum_terms(expr, dimension, is_factor)
    if any(not x.is_Integer for x in index_symbols(expr)):  # q_1 names one coordinate
        raise UnsupportedExpression(f"cannot evaluate {show(expr)}: it depends on an index in a "
                                    "way that is not a sum or a random coordinate")
    return [Term(expr)]


def _needs_expansion(base: Expr) -> bool:
    return bool(base.has(*SUMS)) or bool(index_symbols(base)) or isinstance(base, Add) \
        or any(True for _ in base.atoms(sp.Indexed))


def _sum_terms(expr: Expr, dimension: Expr, is_factor) -> list[Term]:
    if isinstance(expr, SumOverDistinct):
        if sp.simplify(expr.upper - dimension) != 0:
            raise UnsupportedExpression(
                f"sum over i != j up to {expr.upper}: indices run over 1..{dimension}")
        distinct = frozenset({frozenset(expr.indices)})
    else:
        for _, lower, upper in expr.limits:
            if lower != 1 or sp.simplify(upper - dimension) != 0:
                raise UnsupportedExpression(
                    f"sum from {lower} to {upper}: indices run over 1..{dimension}")
        distinct = frozenset()
    inner = expand_terms(summand(expr), dimension, is_factor)
    for t in inner:
        if t.coeff.has(*bound_indices(expr)):
            raise UnsupportedExpression(f"{show(t.coeff)} depends on the summation index of "
                                        f"{show(expr)}; only coordinates may depend on it")
    return [_fresh(Term(t.coeff, bound_indices(expr) + t.bound, t.distinct | distinct, t.factors))
            for t in inner]


@dataclass(frozen=True)
class Block:
    """One value that several indices share; ``label`` names it for caching and printing."""

    label: object


def coincidence_patterns(indices: tuple, distinct: frozenset, fixed: dict,
                         dimension: Expr) -> Iterator[tuple[dict, Expr]]:
    """Every way the ``indices`` can coincide with each other and with the ``fixed`` blocks.

    Yields (assignment index -> Block, number of index tuples with exactly that pattern).
    ``fixed`` maps already-determined indices (free indices, integers) to pairwise distinct Blocks.
    """
    fixed_blocks = list(dict.fromkeys(fixed.values()))

    def allowed(index, block, assignment) -> bool:
        return all(assignment.get(other) != block
                   for pair in distinct if index in pair for other in pair if other != index)

    def extend(position: int, assignment: dict, new_blocks: list) -> Iterator[tuple[dict, Expr]]:
        if position == len(indices):
            free = dimension - len(fixed_blocks)
            yield dict(assignment), sp.Mul(*(free - t for t in range(len(new_blocks))))
            return
        index = indices[position]
        for block in fixed_blocks + new_blocks:
            if allowed(index, block, assignment):
                assignment[index] = block
                yield from extend(position + 1, assignment, new_blocks)
                del assignment[index]
        block = Block(("new", len(new_blocks), position))
        if allowed(index, block, assignment):
            assignment[index] = block
            yield from extend(position + 1, assignment, new_blocks + [block])
            del assignment[index]

    if any(fixed.get(a) is not None and fixed.get(a) == fixed.get(b)
           for pair in distinct for a, b in [tuple(pair)]):
        return
    yield from extend(0, dict(fixed), [])


def free_index_cases(exprs: list[Expr], distinct: frozenset) -> list[dict]:
    """The cases a statement with free indices splits into: which of them are equal.

    Integer indices are fixed distinct values; a free symbol may coincide with one of them.
    Returns assignments index -> Block, one per consistent pattern.
    """
    symbols = set().union(*(index_symbols(e) for e in exprs))
    integers = sorted(s for s in symbols if s.is_Integer)
    names = sorted((s for s in symbols if not s.is_Integer), key=str)
    fixed = {n: Block(("value", n)) for n in integers}
    patterns = coincidence_patterns(tuple(names), distinct, fixed, sp.Dummy("unused"))
    # the blocks of free indices get labels of their own: the blocks that bound indices open
    # later are labelled ("new", ...) too, and must never compare equal to these
    return [{index: Block(("free", *block.label[1:])) if block.label[0] == "new" else block
             for index, block in assignment.items()} for assignment, _ in patterns]


def sum_over_patterns(term: Term, fixed: dict, dimension: Expr,
                      factor_value: Callable[[tuple[Expr, ...], dict], Expr]) -> Expr:
    """Exact value of ``term`` without its coefficient, given the blocks of its free indices."""
    free = set().union(*(index_symbols(f) for f in term.factors)) - set(term.bound)
    relevant = {index: fixed.get(index, Block(("value", index))) for index in free}
    total = sp.S.Zero
    for assignment, count in coincidence_patterns(term.bound, term.distinct, relevant, dimension):
        if count == 0:
            continue
        total += count * factor_value(term.factors, assignment)
    return total
