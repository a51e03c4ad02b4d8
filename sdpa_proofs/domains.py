"""Where a claim's expressions have a value.  (a^2 - 4)/(a - 2) = a + 2 holds for every a > 0
but a = 2, where the left side is no number: the checks work at points and in SymPy's algebra,
which cancels a - 2, so a claim is proved only where every division in it and its proof is
by a number other than 0.  A report shows that as a condition, a != 2, beside the declared
ones (declarations.conditions); a divisor the declarations keep from 0 (sigma_q^2 + 1, d)
puts none.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp
from sympy import Expr, Symbol

from .declarations import conditions
from .expressions import BINDERS, MOMENT_FUNCTIONS, bound_indices
from .limits import Lim
from .realnumbers import certainly_nonzero


def nonzero_divisors(exprs: list[Expr]) -> list[Expr]:
    """The conditions a != r (or f != 0) under which every divisor in the expressions is
    not 0, for the divisors made of parameters (and, outside a moment, of coordinates: a
    pointwise claim holds at every point) that their declarations do not keep from 0; sorted,
    each once."""
    return nonzero_conditions(divisors(exprs))


def nonzero_conditions(divisors: list[Expr]) -> list[Expr]:
    """The conditions under which none of the divisors is 0 (see nonzero_divisors)."""
    found: set = set()
    for divisor in divisors:
        if not _kept_from_zero(divisor):
            found |= _nonzero(divisor)
    return sorted(found, key=sp.default_sort_key)


def divisors(exprs: list[Expr], moments: bool = False) -> list[Expr]:
    """The divisors in the expressions that conditions can be stated for: made of parameters,
    and of coordinates where no moment holds the division; with ``moments``, those that hold a
    moment instead, whose value a model gives (Var(q_1) is a^2 where q_1 = a u)."""
    found: dict = {}
    for expr in exprs:
        bound = _bound_variables(expr)
        for divisor, in_moment in _divisions(expr):
            if divisor.has(*BINDERS) or divisor.free_symbols & bound:
                continue  # a sum's terms, a bound index: the checks' own business
            if divisor.has(*MOMENT_FUNCTIONS) == moments and not (
                    in_moment and divisor.has(sp.Indexed)) and _named(divisor):
                found[divisor] = None
    return list(found)


def _named(divisor: Expr) -> bool:
    """Whether the divisor depends on names of the user's or the library's (not only on the
    toolkit's own Dummies, which no report could state a condition about)."""
    return bool(divisor.free_symbols) and all(
        type(x) is Symbol or isinstance(x, sp.Indexed) for x in divisor.free_symbols)


def _bound_variables(expr: Expr) -> set:
    """The variables expr binds: a sum's indices, a limit's n (log n divides nothing as
    n -> oo)."""
    return {x for b in expr.atoms(*BINDERS) for x in bound_indices(b)} | \
        {limit.variable for limit in expr.atoms(Lim)}


def _divisions(expr: Expr, in_moment: bool = False):
    """(divisor, whether a moment holds the division) for the bases of the powers in expr whose
    exponents may be negative, at any depth: x/(a - 2) divides by a - 2, and a^(c - 3) by a at
    c = 2.  A division inside E[...] concerns the integral, not a point."""
    if isinstance(expr, sp.Pow) and not expr.exp.is_nonnegative:
        yield expr.base, in_moment
    inside = in_moment or isinstance(expr, MOMENT_FUNCTIONS)
    for arg in expr.args:
        if isinstance(arg, Expr):
            yield from _divisions(arg, inside)


def _kept_from_zero(divisor: Expr) -> bool:
    """Whether the declarations keep the divisor from 0, a positive integer n counted as at
    least 1 (which SymPy's assumptions do not count): n + e^R - 1 is n' + e^R for n' >= 0."""
    shifted = {x: sp.Dummy(x.name, integer=True, nonnegative=True) + 1
               for x in divisor.free_symbols if x.is_integer and x.is_positive}
    return certainly_nonzero(divisor) or certainly_nonzero(divisor.xreplace(shifted))


@lru_cache(maxsize=1024)  # a step's divisors are most of the next step's
def _nonzero(divisor: Expr) -> frozenset:
    """divisor != 0 as conditions, factor by factor: a != r for each root r of a factor in one
    symbol that the symbol's declarations admit (none for a + 2 with a > 0), x != y for a
    factor x - y, f != 0 for any other factor."""
    zeros = sp.fraction(sp.together(divisor))[0]  # its poles are divisors in their own right
    try:
        _, factors = sp.factor_list(zeros)
    except Exception:  # noqa: BLE001 - not a polynomial (n p/(1 - p) + n): one factor
        factors = [(zeros, 1)]
    found: set = set()
    for factor, _ in factors:
        if factor.is_number:
            continue
        # a coordinate first: a pointwise claim holds where z_1 != a
        symbols = sorted(factor.free_symbols, key=lambda x: (not isinstance(x, sp.Indexed), str(x)))
        roots = _admitted_roots(factor, symbols[0]) if len(symbols) == 1 else None
        if roots is None:
            found.add(_solved(factor, symbols))
        else:
            found |= {sp.Ne(symbols[0], r, evaluate=False) for r in roots}
    return frozenset(found)


def _admitted_roots(factor: Expr, x: Symbol) -> list[Expr] | None:
    """The real roots of a factor in x that x's declarations admit (a > 0 admits 2, not -2);
    None where SymPy cannot list them."""
    try:
        roots = sp.solveset(factor, x, domain=sp.S.Reals)
    except Exception:  # noqa: BLE001 - SymPy's failure to solve says nothing of the roots
        return None
    if not isinstance(roots, sp.FiniteSet) or roots.has(sp.CRootOf):
        return None  # a != CRootOf(x^5 - x - 1, 0) says less plainly what f != 0 says
    return [r for r in roots if all(c.subs(x, r) is not sp.false for c in conditions(x))]


def _solved(factor: Expr, symbols: list[Symbol]) -> Expr:
    """factor != 0 as x != y where the factor is linear in a symbol x with a number as its
    coefficient (a - b != 0 reads a != b), else as it is (a^5 - a - 1 != 0)."""
    for x in symbols:
        poly = factor.as_poly(x)
        if poly is not None and poly.degree() == 1 and poly.LC().is_number:
            return sp.Ne(x, -poly.nth(0) / poly.LC(), evaluate=False)
    return sp.Ne(factor, 0, evaluate=False)
