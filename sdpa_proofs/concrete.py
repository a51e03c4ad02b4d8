"""Concrete instances of symbolic statements: a dimension, parameter values, values for the
free indices and for symbols nothing fixes, and sums written out term by term."""

from __future__ import annotations

import itertools
import random
from functools import lru_cache

import sympy as sp
from sympy import Expr, Indexed

from .algebra import random_value, small_integers
from .expressions import BINDERS, MaxOver, bound_indices, index_symbols, random_coordinates
from .realnumbers import put_in
from .symbols import SIZES


def is_pointwise(before: Expr, after: Expr) -> bool:
    """A statement about the coordinates themselves (no expectation around them), such as the
    softmax Jacobian: it must hold at every point, not on average."""
    return bool(random_coordinates(before) | random_coordinates(after))


def expand_sums(expr: Expr) -> Expr:
    """Write out every sum whose limits are concrete integers (by substituting each value with
    xreplace, which also reaches derivative variables such as z_j in d/dz_j)."""
    if not expr.args:
        return expr
    args = [expand_sums(a) for a in expr.args]
    if any(new is not old for new, old in zip(args, expr.args)):  # rebuilding an Indexed
        expr = expr.func(*args)                                  # costs its assumptions
    if isinstance(expr, sp.Sum):
        written = _written_out(expr.function, list(expr.limits))
        return expr if written is None else written
    return sp.sympify(expr.doit(deep=False)) if isinstance(expr, BINDERS) else expr


def _written_out(function: Expr, limits: list) -> Expr | None:
    """sum over ``limits`` (SymPy's order: the last is the outermost) written out, the outer
    index put into the inner limits first (sum_{i=1}^{3} sum_{j=1}^{i}); None when a range is
    not concrete."""
    if not limits:
        return function
    *inner, (index, lower, upper) = limits
    if not (lower.is_Integer and upper.is_Integer):
        return None
    terms = []
    for value in range(int(lower), int(upper) + 1):
        at = {index: sp.Integer(value)}
        term = _written_out(put_in(function, at), [(i, put_in(lo, at), put_in(hi, at))
                                                   for i, lo, hi in inner])
        if term is None:
            return None
        terms.append(term)
    return sp.Add(*terms)


def least_dimension(exprs) -> int:
    """The smallest dimension at which every coordinate and entry the expressions name exists:
    their largest concrete index (z_5, u_7) or concrete upper end of a sum or maximum over
    entries (Σ_{t=1..9} z_t names z_9; Σ_{t=1..9} t names none)."""
    return max([int(i) for x in exprs for e in x.atoms(Indexed) for i in e.indices
                if i.is_Integer]
               + [int(limit[2]) for x in exprs for binder in x.atoms(sp.Sum, MaxOver)
                  for limit in binder.limits if limit[2].is_Integer
                  and any(limit[0] in e.indices for e in binder.atoms(Indexed))], default=1)


def from_least(dimensions, least: int) -> list[int]:
    """The dimensions to evaluate at, each below ``least`` moved up to start there."""
    start = min(dimensions)
    return sorted({dim if dim >= least else least + dim - start for dim in dimensions})


def concretise(expr: Expr, substitution: dict, indices: dict | None = None) -> Expr:
    """Give the free indices their values (not the bound ones of the same name), substitute d
    and the parameters, write the sums out, then substitute the entries that writing out
    produced (matrix entries such as Sigma_qk[1, 1]); MisjudgedNumber where putting values
    in makes a number that SymPy misjudges as it builds it (realnumbers.put_in)."""
    expr = put_in(expr, indices or {}, substitute_free)
    return put_in(expand_sums(put_in(expr, substitution)), substitution)


def substitute_free(expr: Expr, values: dict) -> Expr:
    """xreplace for the free occurrences only: a sum's own index keeps its name inside it."""
    if not values or not expr.args:
        return values.get(expr, expr) if not expr.args else expr
    if isinstance(expr, BINDERS):
        inner = {k: v for k, v in values.items() if k not in bound_indices(expr)}
        if isinstance(expr, (sp.Sum, MaxOver)):
            limits = [(var, substitute_free(lo, values), substitute_free(hi, values))
                      for var, lo, hi in expr.limits]
            return expr.func(substitute_free(expr.function, inner), *limits)
        return expr.func(substitute_free(expr.function, inner), *expr.indices,
                         substitute_free(expr.upper, values))
    return expr.func(*(substitute_free(a, values) for a in expr.args))


def concrete_index_values(exprs: list[Expr], distinct: frozenset, dim: int,
                          dimension: Expr) -> list[dict]:
    """All assignments of values 1..dim to the free index symbols respecting ``distinct``.
    The dimension is none of them, though δ(d, 2) compares it like one: it is dim; nor is
    another size (n keys under a model of d coordinates), which is a parameter of its own."""
    names = sorted((s for e in exprs for s in index_symbols(e)
                    if not s.is_Integer and s != dimension and s not in SIZES), key=str)
    names = list(dict.fromkeys(names))
    values = []
    for combo in itertools.product(range(1, dim + 1), repeat=len(names)):
        assignment = dict(zip(names, map(sp.Integer, combo)))
        if all(assignment.get(a, a) != assignment.get(b, b)
               for pair in distinct for a, b in [tuple(pair)]):
            values.append(assignment)
    return values


def arbitrary_values(exprs: list[Expr], draw: int = 0) -> dict:
    """Values for the symbols that neither the model nor the indices fix (a shift c in
    softmax(z + c) = softmax(z)): the statement is about every value, so seeded values will
    do, respecting the symbols' assumptions; ``draw`` picks another set of them."""
    labels = frozenset().union(*(_symbols_of(e)[0] for e in exprs))
    free = sorted({x for e in exprs for x in _symbols_of(e)[1] if x not in labels}, key=str)
    rng = random.Random(20261129 + 7919 * draw)
    return {x: _drawn(x, draw, rng) for x in free}


def _drawn(symbol: sp.Symbol, draw: int, rng: random.Random) -> Expr:
    """The first two draws of an integer are the values nearest 0 it may take, where a claim
    about an integer c is most often false ((M - 1)^(c - 3) jumps at c = 2); others random."""
    if symbol.is_integer and draw < 2:
        return small_integers(symbol, 2)[draw]
    return random_value(symbol, rng)


@lru_cache(maxsize=1024)  # a side is given values at every dimension, point and draw
def _symbols_of(expr: Expr) -> tuple[frozenset, frozenset]:
    """The labels and indices of expr's entries (q and i in q_i), and its free symbols."""
    entries = expr.atoms(Indexed)
    labels = {x.base.label for x in entries} | {i for x in entries for i in x.indices}
    return frozenset(labels), frozenset(x for x in expr.free_symbols if type(x) is sp.Symbol)


def format_point(where: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in where.items())
