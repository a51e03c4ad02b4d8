"""Plain algebra: canonical forms and a three-valued equality test.

E[.], Var(.) and sd(.) are opaque here: algebra may rewrite inside their arguments and move sums
around (linearity of finite sums, renaming bound indices, reordering nested sums), but it never
relates E[X] to anything else.  So no probabilistic step can pass as algebra.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import lru_cache
from itertools import count, permutations
from types import MappingProxyType

import mpmath
import sympy as sp
from sympy import Add, Expr, Mul, Sum, Symbol

from .errors import UnsupportedExpression
from .expressions import (
    BINDERS,
    MOMENT_FUNCTIONS,
    SD,
    SUMS,
    E,
    MaxOver,
    SumOverDistinct,
    Var,
    bound_indices,
    random_coordinates,
    rebind,
    symmetric_order,
)
from .limits import Lim
from .realnumbers import misjudged_number, numbers_as_unknowns, proven_sign, written_with
from .text import show


def distribute_sums(expr: Expr) -> Expr:
    """Linearity of finite sums: sum_i (a_i + b_i) = sum_i a_i + sum_i b_i and
    sum_i c a_i = c sum_i a_i for c free of i; applied everywhere, arguments of E included."""
    if not expr.args:
        return expr
    expr = expr.func(*(distribute_sums(a) for a in expr.args))
    if isinstance(expr, SUMS):
        return _distribute(expr)
    return expr


def _distribute(expr: Expr) -> Expr:
    body = sp.expand(expr.function)
    bound = set(bound_indices(expr))
    rebuilt = []
    for term in Add.make_args(body):
        outside, inside = [], []
        for factor in Mul.make_args(term):
            # any occurrence, not just subscripts or free symbols: in sum_i i*q_i the factor i,
            # and in sum_j d/dz_j f the derivative (whose variable SymPy counts as bound), stay
            (inside if factor.has(*bound) else outside).append(factor)
        rebuilt.append(Mul(*outside) * rebind(expr, Mul(*inside)))
    return Add(*rebuilt)


class BoundName(Symbol):
    """The name algebra gives an index bound at some depth.  A class of its own, so that no
    symbol of a derivation (which can only be a plain Symbol) is ever equal to it."""


def _canonical_index(depth: int) -> Symbol:
    """The name of the index bound at nesting depth n.  An integer, and nothing more: a sum may
    run over -d..0, so assuming the index positive would let SymPy turn |t| into t."""
    return BoundName(f"ι{depth}", integer=True)


def rename_bound(expr: Expr, depth: int = 0) -> Expr:
    """Alpha-normal form: the index bound at nesting depth n is called ι_n; among equivalent
    orders of a nest of sums over the same range, the least one is chosen."""
    return _renamed(_fresh_bound(expr), depth)


def _fresh_bound(expr: Expr) -> Expr:
    """The same expression with every bound index a fresh dummy.  Renaming by depth can then
    capture nothing: an argument of E normalised on its own binds ι_0 too, and in
    sum_i E[q_i sum_j E[q_i q_j]] the outer i renamed ι_0 would become its inner j."""
    if not expr.args:
        return expr
    indices = bound_indices(expr)
    if not indices:
        return expr.func(*(_fresh_bound(a) for a in expr.args))
    fresh = expr.xreplace({x: sp.Dummy(str(x), integer=True) for x in indices})
    body = _fresh_bound(fresh.function)
    if isinstance(fresh, MaxOver):
        return MaxOver(body, *fresh.limits)
    return rebind(fresh, body)


def _renamed(expr: Expr, depth: int) -> Expr:
    if isinstance(expr, Sum):
        return _rename_sum(expr, depth)
    if isinstance(expr, SumOverDistinct):
        i, j = expr.indices
        a, b = _canonical_index(depth), _canonical_index(depth + 1)
        options = [symmetric_order(SumOverDistinct(
            _renamed(expr.function.xreplace({i: x, j: y}), depth + 2), a, b, expr.upper))
            for x, y in ((a, b), (b, a))]
        return min(options, key=sp.srepr)
    if isinstance(expr, MaxOver):
        (index, lower, upper), = expr.limits
        name = _canonical_index(depth)
        return MaxOver(_renamed(expr.function.xreplace({index: name}), depth + 1),
                       (name, lower, upper))
    if not expr.args:
        return expr
    return expr.func(*(_renamed(a, depth) for a in expr.args))


def _rename_sum(expr: Sum, depth: int) -> Expr:
    limits = list(expr.limits)
    options = []
    same_range = len({(lo, hi) for _, lo, hi in limits}) == 1
    orders = permutations(limits) if same_range and len(limits) <= 4 else [tuple(limits)]
    for order in orders:
        names = {var: _canonical_index(depth + n) for n, (var, _, _) in enumerate(order)}
        body = _renamed(expr.function.xreplace(names), depth + len(limits))
        # a limit may name an index this sum binds further out: Σ_{i=1}^{n} Σ_{j=1}^{i}
        options.append(symmetric_order(Sum(body, *((names[var], lo.xreplace(names),
                                                    hi.xreplace(names))
                                                   for var, lo, hi in order))))
    return min(options, key=sp.srepr)


def readable(expr: Expr) -> Expr:
    """Bound indices renamed i, j, l, m, ... by depth, for messages (engine results carry
    anonymous dummies that would all print alike)."""
    renamed = rename_bound(expr)
    taken = {str(s) for s in renamed.free_symbols}
    names = [n for n in ("i", "j", "l", "m", "n", "r", "s", "t") if n not in taken]
    depth_symbols = sorted(renamed.atoms(BoundName), key=str)
    return renamed.xreplace({s: Symbol(names[int(str(s)[1:])], integer=True)
                             for s in depth_symbols if int(str(s)[1:]) < len(names)})


def canonical(expr: Expr) -> Expr:
    """A normal form for plain algebra: expanded, sums distributed, bound indices renamed."""
    expr = sp.sympify(expr)
    if expr.has(sp.Float):  # SymPy before 1.13 counts 2.0 == 2: a cache would mix them up
        return _canonical(expr)
    return _remembered_canonical(expr)


def _canonical(expr: Expr) -> Expr:
    expr = distribute_sums(sp.expand(expr))
    expr = _map_moment_args(expr, lambda arg: canonical(arg))
    return sp.expand(symmetric_order(rename_bound(expr)))


# A pure function of its argument, asked for again and again: every rewrite pass of a rule check
# compares each node's normal form with a lemma's or a citation's pattern.
_remembered_canonical = lru_cache(maxsize=8192)(_canonical)


def _map_moment_args(expr: Expr, f) -> Expr:
    if isinstance(expr, MOMENT_FUNCTIONS):
        return expr.func(*(f(a) for a in expr.args))
    if not expr.args:
        return expr
    return expr.func(*(_map_moment_args(a, f) for a in expr.args))


def opaque_atoms(expr: Expr) -> set[Expr]:
    """Moment atoms, sums, maxima and derivatives: what a numerical probe treats as unknowns.
    Algebra takes no derivatives, so one left in an expression (of a maximum, which the
    differentiate rule refuses) is an unknown as a whole: putting numbers into its variable
    means nothing, and an unknown standing in for sum_l z_l^2 inside it would give 0."""
    if isinstance(expr, MOMENT_FUNCTIONS + SUMS + (MaxOver,)):
        return {expr}
    if isinstance(expr, sp.Derivative):  # one that algebra was left (of a maximum, say)
        return {expr}
    found: set = set()
    for arg in expr.args:
        found |= opaque_atoms(arg)
    return found


def algebraically_equal(a: Expr, b: Expr, probes: int = 3, numbers: dict | None = None,
                        distinct: frozenset = frozenset()) -> bool | None:
    """True: equal by algebra alone.  False: a point where they differ exists (atoms taken as
    independent unknowns).  None: neither could be shown.  The numbers take part as unknowns
    of their proven signs (``without_numbers``; ``numbers`` maps unknowns already put in to
    their numbers), and their values only where a difference is probed.  Never True where
    one side has a part with no value at some admissible integer that the other lacks
    (``unshared_pole``): d! is not 120 binomial(d, 5) (d - 5)! at d = 3.  The indices that
    Kronecker deltas compare are also probed where they coincide, but for the pairs in
    ``distinct``, known to differ (``differs_somewhere``)."""
    equal = _equal_where_defined(a, b, probes, numbers, distinct)
    return None if equal and unshared_pole(a, b) else equal


def _equal_where_defined(a: Expr, b: Expr, probes: int, numbers: dict | None,
                         distinct: frozenset) -> bool | None:
    """``algebraically_equal`` as SymPy's algebra sees it: True may hold only where both
    sides have a value; False is a point where both have one, and differ."""
    (a, b), numbers = without_numbers(a, b, known=numbers)
    difference = sp.expand(canonical(a) - canonical(b))
    if difference == 0:
        return True
    atoms = opaque_atoms(difference)
    stand_ins = {atom: _stand_in(n, atom) for n, atom in enumerate(atoms)}
    plain = difference.xreplace(stand_ins)
    if simplifies_to_zero(plain):
        return True
    return False if differs_somewhere(plain, probes, numbers, distinct) else None


def expand_to_the_same(a: Expr, b: Expr) -> bool:
    """Whether a and b have the same canonical form, the numbers in them as unknowns."""
    (a, b), _ = without_numbers(a, b)
    return sp.expand(canonical(a) - canonical(b)) == 0


def without_numbers(*exprs: Expr, known: dict | None = None) -> tuple[list, dict]:
    """The expressions with each number that is not a rational as an unknown of its proven
    sign, the same unknown in each (``realnumbers.numbers_as_unknowns``), and the map back,
    which includes ``known`` (unknowns put in before).  SymPy's expand and constructors
    rewrite numbers by what evalf makes of them: expand splits sin(log(2 cos(10^-50)) - log 2)
    into sin(log(cos(10^-50))), which SymPy takes for 0, and d^(1 + it) became d (review
    round 47)."""
    plain, numbers = numbers_as_unknowns(sp.Tuple(*exprs))
    return list(plain.args), {**(known or {}), **numbers}


def misjudged_by_sympy(*exprs: Expr) -> str | None:
    """Why SymPy's algebra is not to be trusted with these expressions: a number in them that
    its assumptions misjudge (``realnumbers.misjudged_number``), which expand, simplify and
    its constructors then rewrite wrongly; None if there is none."""
    for expr in exprs:
        number = misjudged_number(expr)
        if number is not None:
            return (f"SymPy's assumptions misjudge the number {show(number)} (its sign, proven "
                    f"by interval arithmetic, is {_SIGN_NAMES[proven_sign(number)]}), so no "
                    "algebra of SymPy's is trusted with this step")
    return None


_SIGN_NAMES = {1: "positive", -1: "negative", 0: "zero", None: "unknown"}


def unshared_pole(a: Expr, b: Expr) -> str | None:
    """Why SymPy's algebra cannot show a = b for every admissible value of the symbols: a part
    of one side that has no value at some integers its symbols may take, where the other
    side has none of that lack (``pole_at_integers``).  SymPy's cancel and its identities of
    the gamma function hold only where both sides are defined: simplify takes 120 binomial(d,
    5) (d - 5)! to d!, which is no value at d = 1..4, and (d^2 - 25)/(d - 5) to d + 5, none
    at d = 5 (review round 62).  Parts count as the same where they lack a value at the same
    integers: x/(d - 5) and 2x/(2d - 10) share theirs.  None if there is none."""
    part = _unshared_part(a, b)
    return None if part is None else _no_value_said(part)


def _unshared_part(a: Expr, b: Expr) -> Expr | None:
    parts = [pole_at_integers(sp.sympify(side)) for side in (a, b)]
    lacks = [set().union(*side.values()) for side in parts]
    only = [part for side, other in ((0, 1), (1, 0)) for part, where in parts[side].items()
            if not where <= lacks[other]]
    return min(only, key=sp.default_sort_key) if only else None


def _no_value_said(part: Expr) -> str:
    part = _built(part)  # a part put together as written reads d - 5, not d - 1·5
    entries = part.atoms(sp.Indexed)
    symbols = part.free_symbols - entries - {x.base.label for x in entries}
    return (f"{show(part)} has no value at some admissible value of "
            f"{', '.join(sorted(map(str, symbols)))}, and the other side has no such "
            "part: SymPy's algebra shows identities only where both sides are defined")


def unshared_pole_for_any_values(a: Expr, b: Expr) -> str | None:
    """``unshared_pole`` with each moment, limit and derivative in either side an unknown real
    number (``_stand_in``: a variance's, and a mean of what is never negative, non-negative),
    the same in both: where nothing says what they are (no model at the chain's end; a moment
    whose value depends on which free indices coincide), d - 5 E[q_1^2]/sigma_q^2 may be 0 at
    d = 5 for all that is known, and (x^2 + x)/x is no x + 1 (review round 73)."""
    nodes = [node for side in (a, b) for node in sp.preorder_traversal(side)]
    if not any(may_have_no_value(node) for node in nodes):  # the kinds pole_at_integers finds
        return None
    # an atom holding a part that may lack a value stays, for the guard to see that part
    atoms = {node for node in nodes if isinstance(node, ENGINE_ATOMS) and not any(
        may_have_no_value(part) for part in sp.preorder_traversal(node))}
    unknowns = {atom: _unknown_for(atom) for atom in atoms}
    part = _unshared_part(sp.sympify(a).xreplace(unknowns), sp.sympify(b).xreplace(unknowns))
    if part is None:
        return None
    return _no_value_said(part.xreplace({u: atom for atom, u in unknowns.items()}))


#: what the exact engine works out to a value: moments, almost-sure limits, derivatives
ENGINE_ATOMS = (*MOMENT_FUNCTIONS, Lim, sp.Derivative)


@lru_cache(maxsize=1024)  # a chain's right side is the next step's left, under every model
def pole_at_integers(expr: Expr) -> Mapping[Expr, frozenset]:
    """The parts of expr that may have no (real) value at an admissible value of the integers
    they depend on (the dimension, a count, an index), as SymPy's cancel and gamma identities
    meet them, each with where it lacks one (``_no_value_where``): a negative power of what
    may be 0, a fractional power of what may be negative, a logarithm of what may not be
    positive, a factorial of what may be negative, a binomial whose lower argument is no
    constant and which may leave the range where it is a ratio of factorials.  What the part
    is taken of depends on integers alone (floor(d/5) - 1, sqrt(d) - 2 and sums of them
    count), or has such a factor (sigma d - 5 sigma, (d - 5) q_1^2 + d - 5); parts of
    coordinates and moments alone are left to the checks that integrate and sample them.  A
    sum's index runs from its lower bound up, or from its upper bound down: a part defined
    either way is defined over the sum, and where it lacks a value is told with the sums
    that bind it (a free i - 5 is not a bound one).  Inside a limit only what is free of its
    variable counts (n goes to infinity, d stays: the factor d - 5 of n d - 5 n counts)."""
    found: dict[Expr, frozenset] = {}

    def add(part: Expr, where, binders: tuple, unbounded: frozenset) -> None:
        where = [w for w in where if not w[1].free_symbols & unbounded]
        if not where:
            return
        bound = {b for b in binders if part.has(b[0])}
        while True:  # and the binders of the indices their ranges run up to: 1/(i - 5) over
            more = {b for b in binders  # i <= j <= d is not 1/(i - 5) over i <= j <= 3
                    if any(c is not b and c[2].has(b[0]) for c in bound)}
            if more <= bound:
                break
            bound |= more
        bound = frozenset(bound)
        found[part] = found.get(part, frozenset()) | {(*w, bound) for w in where}

    def visit(node: Expr, ends: tuple[dict, dict], binders: tuple, unbounded: frozenset) -> None:
        if isinstance(node, Lim):  # what holds its variable needs a value only eventually
            visit(node.body, ends, binders, unbounded | {node.variable})
            return
        where = _no_value_where(node)
        if where and all(_undefined_at_some_integer(node, end) for end in ends):
            add(node, where, binders, unbounded)
        if isinstance(node, Sum):
            for _, lower, upper in node.limits:
                visit(lower, ends, binders, unbounded)
                visit(upper, ends, binders, unbounded)
            visit(node.function, _from_either_end(node.limits, ends),
                  binders + tuple((x, "Sum", sp.Tuple(*r)) for x, *r in node.limits), unbounded)
            return
        if isinstance(node, BINDERS):  # Sigma_{i != j}, a maximum over l: bound, range unused
            binders = binders + tuple((x, type(node).__name__, sp.Tuple(*node.args[1:]))
                                      for x in bound_indices(node))
        for arg in node.args:
            visit(arg, ends, binders, unbounded)
    visit(expr, ({}, {}), (), frozenset())
    return MappingProxyType(found)  # remembered: read-only


def _no_value_where(part: Expr) -> frozenset:
    """Where a part may have no value, as conditions on what it is taken of: each factor of a
    negative power's base that depends on integers alone being 0 (irreducible and made monic
    where the base is a polynomial, and dropped where it has no admissible integer root), the
    base of a power with a fractional exponent being negative, the argument of a factorial a
    negative integer, that of a logarithm not positive, a binomial outside its factorial
    range; a power whose exponent is no number stands for itself (0^(d - 5) has a value at
    d = 5, (5 - d)^(d/2) at d = 6).  Empty where the part depends on no integer."""
    if isinstance(part, sp.Pow):
        zero = _integer_factors(part.base) if part.exp.is_nonnegative is not True else ()
        root = part.exp.is_integer is not True and _of_integers(part.base)
        if not part.exp.is_number:
            return frozenset({("as written", part)}) if zero or root \
                or _power_of_zero_below_zero(part) else frozenset()
        return frozenset({("= 0", f) for f in zero}
                         | ({("< 0 under a root", part.base)} if root else set())
                         | ({("as written", part)} if _power_of_zero_below_zero(part) else set()))
    # a factorial or binomial of anything that moves with an integer: (floor(log d) - 3)^2 - 1
    # is -1 at d = 21..54 (review round 70); a logarithm only of what _of_integers takes
    if isinstance(part, sp.factorial) and _on_an_integer(part.args[0]):
        return frozenset({("a negative integer", part.args[0])})
    if isinstance(part, sp.log) and _of_integers(part.args[0]):
        return frozenset({("<= 0", part.args[0])})
    if isinstance(part, sp.binomial) and part.args[1].free_symbols and _on_an_integer(part):
        return frozenset({("outside", part)})
    return frozenset()


def _built(expr: Expr) -> Expr:
    """expr as SymPy builds it from its parts (as written, d - 1·5 is d - 5 once built); as
    it stands where SymPy cannot build it."""
    try:
        return expr.func(*(_built(a) for a in expr.args)) if expr.args else expr
    except (ValueError, TypeError, ZeroDivisionError):
        return expr


def _power_of_zero_below_zero(power: sp.Pow) -> bool:
    """Whether power is 0^u for a negative number u (a moment 0 put in, 1/E[q_1] under a model
    of mean 0: sign(1/0) is no number, though SymPy keeps it as one), or for an exponent u
    that moves with an integer and may be negative: 0^(floor(d/7) - floor((d + 1)/7)) is
    0^(-1) at d = 6 (review rounds 73 and 75)."""
    return power.base.is_zero is True and power.exp.is_nonnegative is not True \
        and (power.exp.is_number or _on_an_integer(power.exp))


def may_have_no_value(part: Expr) -> bool:
    """Whether part is of a kind ``_no_value_where`` looks at: a negative or fractional power,
    a factorial, a logarithm, a binomial."""
    if isinstance(part, sp.Pow):
        return part.exp.is_nonnegative is not True or part.exp.is_integer is not True
    return isinstance(part, (sp.factorial, sp.log, sp.binomial))


def _on_an_integer(x: Expr) -> bool:
    """Whether x depends on an integer (the dimension, a count, an index) and on no coordinate
    or moment, which are the other checks' to integrate and sample."""
    return any(s.is_integer for s in x.free_symbols) \
        and not x.has(sp.Indexed, *MOMENT_FUNCTIONS)


def _of_integers(x: Expr) -> bool:
    """Whether x depends on integers alone (the dimension, a count, an index), by arithmetic,
    roots and the integer-valued functions (floor, |.|, sign, factorials, sums, ...), or is a
    polynomial in integers and real parameters (4 sigma - d sigma).  Coordinates and moments
    are the other checks' to integrate and sample; exp, log, sin, cos and tanh of integers are
    numbers whose size the numeric check weighs (log(cos(t 10^-50)) is positive for every t
    it meets); and a mixture that is no polynomial is factored with its other parts as
    unknowns where it is a denominator (``_integer_factors``), else left to the numeric check
    at the parameter points it tries (log(n p/(1 - p)))."""
    symbols = x.free_symbols
    if not any(s.is_integer for s in symbols) or x.has(sp.Indexed, *MOMENT_FUNCTIONS,
                                                        *TRANSCENDENTAL):
        return False
    return all(s.is_integer for s in symbols) or bool(x.is_polynomial(*symbols))


TRANSCENDENTAL = (sp.exp, sp.log, sp.sin, sp.cos, sp.tanh)
MAX_CONSTANT = 10**12


@lru_cache(maxsize=1024)  # asked by _no_value_where and _undefined_at_some_integer alike
def _integer_factors(base: Expr) -> tuple[Expr, ...]:
    """The factors of base that depend on an integer and may be 0 at an admissible value (d - 5,
    sigma d - 5), each made monic.  Every part of base that is no polynomial takes part in the
    factoring as an unknown of its own (``_unknowns_in``): sigma (d - 5) + sign(d - 5) counts,
    and 1 - floor(d/5) is the factor floor(d/5) - 1.  A factor of coordinates or moments is
    left to the checks that integrate and sample them.  Where SymPy cannot factor the base
    (coefficients such as 1/(1 + sqrt 2)) or it is too large to, the base counts whole."""
    if base.is_zero is False:  # sigma, d, e^z, a sum of squares plus 1: no factor is 0
        return ()
    try:
        factors = [f for part in _zero_only_where(base) for f in _factors_of(part)]
    except Exception:  # noqa: BLE001 - SymPy's factoring failed: the whole base may be 0
        factors = [base]
    return tuple(dict.fromkeys(f for f in factors if any(x.is_integer for x in f.free_symbols)
                               and not _never_zero(f)))


def _never_zero(x: Expr) -> bool:
    """Whether SymPy shows x is 0 nowhere, each integer symbol written as its least value plus
    a count >= 0 and each e^u of known sign as 1 + w or 1/(1 + w) for some w > 0 (taken as
    free of the rest, which can only lose what the rest tells): n - 1 + e^R is t + e^R,
    (d - 1)^2 + sigma is t^2 + sigma, t e^R + n - t for R > 0 is t w + n, and d - e^-sigma
    is (t + w + t w)/(1 + w)."""
    if x.is_zero is False:
        return True
    if _too_large_to_expand(x):
        return False
    growths = {e: 1 + sp.Dummy("w", positive=True) if e.args[0].is_positive
               else 1 / (1 + sp.Dummy("w", positive=True))
               for e in x.atoms(sp.exp) if e.args[0].is_extended_real
               and (e.args[0].is_positive or e.args[0].is_negative)}
    counts = {v: (1 if v.is_positive else 0) + sp.Dummy("t", integer=True, nonnegative=True)
              for v in x.free_symbols if v.is_integer and v.is_nonnegative}
    if not (growths or counts):
        return False
    try:
        written = sp.expand(x.xreplace(growths).xreplace(counts))
        # over one denominator: 1 + t - 1/(1 + w), d - e^-sigma, is (t + w + t w)/(1 + w)
        return written.is_zero is False or sp.fraction(sp.together(written))[0].is_zero is False
    except Exception:  # noqa: BLE001 - a SymPy failure shows nothing: x may be 0
        return False


def _zero_only_where(x: Expr) -> list[Expr]:
    """Expressions that are 0 wherever x is: the factors of a product, the base of a positive
    power, the argument of sign and |.|; none for exp or a negative power, which are never 0.
    So 1/sign(4 sigma - d sigma) has no value at d = 4, as its argument's factor d - 4 tells
    (review round 66 had found it verified)."""
    if isinstance(x, sp.Mul):
        return [part for factor in x.args for part in _zero_only_where(factor)]
    if isinstance(x, sp.Pow) and x.exp.is_number:
        return _zero_only_where(x.base) if x.exp.is_positive else []
    if isinstance(x, (sp.sign, sp.Abs)):
        return _zero_only_where(x.args[0])
    if isinstance(x, sp.exp):
        return []
    return [x]


def _factors_of(x: Expr) -> list[Expr]:
    """The irreducible factors of x's numerator that may be 0 at an admissible integer, monic,
    x taken as a rational function of its symbols and its unknowns (``_unknowns_in``); none
    of coordinates or moments.  A rational function's zeros are its numerator's:
    d sigma/(1 - sigma) + d is d/(1 - sigma)."""
    unknowns = _unknowns_in(x, {})
    generic = x.xreplace(unknowns)
    back = {dummy: node for node, dummy in unknowns.items()}
    variables = sorted(generic.free_symbols, key=lambda v: sp.default_sort_key(back.get(v, v)))
    if not variables:
        return []
    if _too_large_to_expand(generic):  # together and factor_list would take minutes
        return [x]
    # a matrix entry Sigma[1, 1] is a parameter, not a coordinate (review round 75)
    of_coordinates = {dummy for node, dummy in unknowns.items()
                      if node.has(*MOMENT_FUNCTIONS) or random_coordinates(node)}
    numerator = sp.fraction(sp.together(generic))[0]
    monic = [sp.Poly(f, *variables).monic().as_expr()
             for f, _ in sp.factor_list(numerator, *variables)[1]]
    return [f.xreplace(back) for f in monic  # q_1^2 + 1, a coordinate's, does not count
            if not f.free_symbols & of_coordinates and not _no_admissible_root(f)]


def _unknowns_in(x: Expr, found: dict) -> dict:
    """Each outermost part of x that is not built from symbols and rationals by sums, products
    and integer powers (sign(d - 5), floor(d sigma), e^sigma, a sum, sqrt 2, q_1), mapped to
    an unknown that stands for it."""
    if x.is_Symbol or x.is_Rational:
        return found
    if isinstance(x, (sp.Add, sp.Mul)) or (isinstance(x, sp.Pow) and x.exp.is_Integer):
        for arg in x.args:
            _unknowns_in(arg, found)
    elif x not in found:
        found[x] = sp.Dummy()
    return found


def _too_large_to_expand(x: Expr) -> bool:
    """Whether writing x out as a polynomial could take minutes: ((d + s)/(d + 2s))^300 - 2
    did in SymPy's together and factor_list (review round 68)."""
    powers = [abs(p.exp) for p in x.atoms(sp.Pow) if p.exp.is_Integer]
    return sp.count_ops(x) > MAX_EXPANDED_OPS or max(powers, default=0) > MAX_EXPANDED_POWER


MAX_EXPANDED_OPS = 200
MAX_EXPANDED_POWER = 24


def _no_admissible_root(factor: Expr) -> bool:
    """Whether a polynomial in one integer symbol is 0 at none of the values it may take
    (d^2 - 2): an integer root divides the constant term of the polynomial cleared of
    denominators, so every candidate is tried."""
    if len(factor.free_symbols) != 1 or not next(iter(factor.free_symbols)).is_integer:
        return False  # an unknown (log(d + sigma) - 1/2) may be 0 between the integers
    (symbol,) = factor.free_symbols
    poly = sp.Poly(factor, symbol)
    if not all(c.is_Rational for c in poly.coeffs()):  # 5 + Sum(-1, (j, 1, 5)), a radical
        return False                                     # that is 5: kept, not tried
    poly = poly.clear_denoms()[1]
    constant = int(poly.coeff_monomial(1))
    if abs(constant) > MAX_CONSTANT:  # its divisors would take factoring it: kept, not tried
        return False
    candidates = {0} if constant == 0 else {
        sign * q for q in sp.divisors(abs(constant)) for sign in (1, -1)}
    least = 1 if symbol.is_positive else 0 if symbol.is_nonnegative else None
    return not any(poly.eval(r) == 0 for r in candidates if least is None or r >= least)


def _from_either_end(limits, ends: tuple[dict, dict]) -> tuple[dict, dict]:
    """Each index of a sum as its lower bound plus, or its upper bound minus, a count >= 0."""
    below, above = dict(ends[0]), dict(ends[1])
    for index, lower, upper in limits:
        count = sp.Dummy("t", integer=True, nonnegative=True)
        # an infinite bound tells nothing from its end (oo - t is no integer)
        below[index] = index if lower.has(sp.oo, -sp.oo) else lower.xreplace(below) + count
        above[index] = index if upper.has(sp.oo, -sp.oo) else upper.xreplace(above) - count
    return below, above


def _undefined_at_some_integer(node: Expr, indices: dict) -> bool:
    """Whether node may have no value, the sums' indices around it written as ``indices``
    (not put into what holds a sum of its own, which may bind the same index)."""
    def given(x: Expr) -> Expr:
        return x if x.has(Sum) else x.xreplace(indices)
    if isinstance(node, sp.Pow):
        base = given(node.base)
        if _power_of_zero_below_zero(node):
            return given(node.exp).is_nonnegative is not True
        return (node.exp.is_nonnegative is not True
                and any(not _never_zero(given(f)) for f in _integer_factors(node.base))) \
            or (node.exp.is_integer is not True and _of_integers(node.base)
                and base.is_nonnegative is not True)
    if isinstance(node, sp.log):
        return given(node.args[0]).is_positive is not True
    if isinstance(node, sp.factorial):
        return given(node.args[0]).is_nonnegative is not True
    top, bottom = (given(a) for a in node.args)  # a binomial (see _no_value_where)
    return not all(x.is_nonnegative for x in (top, bottom, top - bottom))


def simplifies_to_zero(expr: Expr) -> bool:
    """Whether SymPy's simplify reaches 0 with the numbers in expr as unknowns of their proven
    signs (``numbers_as_unknowns``: simplify decides numbers by evalf, which loses digits).
    SymPy itself can fail on sums (it raises inside sum_simplify on some products of sums); a
    failure proves nothing, so it counts as False."""
    try:
        return sp.simplify(numbers_as_unknowns(expr)[0]) == 0
    except Exception:  # noqa: BLE001 - any internal SymPy error means "not shown"
        return False


@lru_cache(maxsize=4096)  # the same atom, the same unknown: the guard's sides then recur
def _unknown_for(atom: Expr) -> Symbol:
    return _stand_in(0, atom)


def _stand_in(n: int, atom: Expr) -> Symbol:  # a Dummy: it equals no symbol of the user's
    """An unknown for an opaque atom, assuming only what is true of every such atom: E[X] and
    sums are real, Var(X), sd(X) and E[X] for an X that is never negative (q_1^2) are
    non-negative."""
    if isinstance(atom, (Var, SD)) or (isinstance(atom, E) and atom.args[0].is_nonnegative):
        return sp.Dummy(f"atom{n}", nonnegative=True)
    return sp.Dummy(f"atom{n}", real=True)


def differs_somewhere(expr: Expr, probes: int, numbers: dict | None = None,
                      distinct: frozenset = frozenset()) -> bool:
    """Whether expr is not 0 at one of ``probes`` random points (``sign_at``), or at one where
    the indices its Kronecker deltas compare coincide as far as ``distinct`` lets them (random
    indices seldom coincide: sigma^2 delta_ij and 0 differ only where i = j); the unknowns
    that stand for numbers (``without_numbers``) take their values."""
    rng = random.Random(20261129)
    numbers = numbers or {}
    symbols = sorted(expr.free_symbols - set(numbers), key=str)
    points = [{s: random_value(s, rng) for s in symbols} for _ in range(probes)]
    if points and expr.has(sp.KroneckerDelta):
        points.append({**points[0], **_coinciding(expr, distinct)})
    for point in points:
        point = {**point, **numbers}
        try:
            if sign_at(expr, point):
                return True
        except (TypeError, ValueError):
            continue  # no real number there
    return False


def _coinciding(expr: Expr, distinct: frozenset) -> dict:
    """Values for the index symbols that Kronecker deltas in expr compare: each the least
    positive integer that no index known distinct from it has taken, so that all coincide
    that may."""
    indices = sorted({x for delta in expr.atoms(sp.KroneckerDelta) for x in delta.args
                      if x.is_Symbol and x.is_integer and x.is_positive}, key=str)
    values: dict = {}
    for index in indices:
        taken = {values.get(other) for pair in distinct if index in pair for other in pair}
        values[index] = next(v for v in count(1) if v not in taken)
    return {index: sp.Integer(v) for index, v in values.items()}


def sign_at(expr: Expr, point: dict) -> int | None:
    """The sign of expr at ``point``, proven by interval arithmetic (realnumbers) where it can
    be.  Otherwise from SymPy's evalf to 50 digits, which raises its own precision where terms
    cancel but may lose digits silently: its sign counts only where the value is more than
    10^-30 of the size of the terms, or of 1 if they are larger (10^-40 sigma^2 is not 0,
    and terms of 10^40 that cancel do not hide a difference of 1); None where neither tells.
    Raises ValueError or TypeError where the value is no real number."""
    # as written: SymPy's Max and Min of numbers would compare them by evalf
    unevaluated = written_with(expr, point)
    sign = proven_sign(unevaluated) if unevaluated.is_number else None
    if sign is not None:
        return sign
    number = expr.xreplace(point)  # SymPy's own evaluation sees 0 in e^(2/5) - (e^(1/5))^2
    value = sp.N(number, 50)
    if not (value.is_number and value.is_comparable):
        raise ValueError(f"{number} is no real number")
    if value == 0:
        return 0
    size = term_size_at(expr, point)
    if size is None or abs(value) <= mpmath.mpf(10) ** -30 * min(size, 1):
        return None
    return 1 if value > 0 else -1


def term_size_at(expr: Expr, point: dict) -> mpmath.mpf | None:
    """``term_size`` of expr at a point, to 50 digits (the arguments' errors too); None where a
    term is no real number."""
    try:
        with mpmath.workdps(50):
            return term_size(expr, lambda node: mpmath.mpf(sp.N(node.xreplace(point), 50)))
    except (TypeError, ValueError):
        return None


def term_size(expr: Expr, value_of, special=None, apply=None,
              exact_rationals: bool = True, memo: dict | None = None) -> mpmath.mpf:
    """What evaluating ``expr`` at the working precision p can be off by, in units of 10^-p
    (forward error analysis): |a| + |b| for a + b, the sizes' product for a b, for a function
    f(u, ...) |f| plus, for each argument not an exact rational or an index, how far f moves
    when u moves by its own error (exp(z + 10^50) loses z at 45 digits; u^2 at a u that
    rounds to 0 is off by u's error squared; sqrt at 0 by its root), and |value| for anything
    else.  ``value_of`` gives a node's value; ``special`` may give a node's size itself (a
    moment's, from its quadrature), or None; ``apply(expr, values)`` may give expr's function
    at other argument values faster than SymPy (None: it cannot).  With ``exact_rationals``
    False the values come from binary floating point, where 1/7 and 10^60 + 1 are rounded
    like any other number (sin(7 10^12 + 1/7) is off by 10^-33 at 45 digits).  Two values
    are compared
    relative to it where they nearly cancel, never to a fixed 1: 10^-40 z^2 and 2 10^-40 z^2
    differ in every digit.  ``memo`` holds the sizes found so far in this call: a subtree
    that recurs (a softmax's denominator in every p_i) is sized once."""
    memo = {} if memo is None else memo
    if expr not in memo:
        memo[expr] = _term_size(expr, value_of, special, apply, exact_rationals, memo)
    return memo[expr]


def _term_size(expr: Expr, value_of, special, apply, exact_rationals: bool,
               memo: dict) -> mpmath.mpf:
    known = special(expr) if special else None
    if known is not None:
        return known
    if isinstance(expr, (Add, Mul)):
        sizes = [term_size(a, value_of, special, apply, exact_rationals, memo)
                 for a in expr.args]
        return mpmath.fsum(sizes) if isinstance(expr, Add) else mpmath.fprod(sizes)
    value = value_of(expr)
    size = abs(value)
    if isinstance(expr, (sp.Max, sp.Min)):  # off by at most the most any argument is off by
        return max(size, *(term_size(a, value_of, special, apply, exact_rationals, memo)
                           for a in expr.args))
    if isinstance(expr, (sp.Pow, sp.Function)):
        unit = mpmath.mpf(10) ** -mpmath.mp.dps
        at = [value_of(a) for a in expr.args]
        for n, argument in enumerate(expr.args):
            if _held_exactly(argument, exact_rationals):
                continue
            error = term_size(argument, value_of, special, apply, exact_rationals, memo) * unit
            if not error:
                continue
            # the larger of first order and how far f really moves: u^2 at a u that rounded
            # to 0 moves by u's error squared, sqrt at 0 by its root, cos at a u of 10^-61
            # with an error of 3 by 2, all with a slope of about 0
            slope = _slope(expr, n, value_of)
            # without a finite slope, two points bound how far f moves only where it is
            # monotone: frac(u) and (-1)^floor(u) at a u that rounded to an even integer are
            # the same at u +- error and anything in between; u^p (sqrt at 0) is monotone on
            # either side of 0, where its slope is infinite
            if (slope is None or slope == mpmath.inf) and not isinstance(expr, MONOTONE) \
                    and not (isinstance(expr, sp.Pow) and expr.exp.is_number):
                raise UnsupportedExpression(f"{expr}: how far it moves when its argument "
                                            "is off by its rounding is not known")
            slope = slope if slope and slope != mpmath.inf else 0
            try:
                moved = _moved(expr, n, at, error, value, value_of, apply)
            except ValueError:
                if not slope:
                    raise
                moved = 0
            if isinstance(expr, (sp.sin, sp.cos)):  # between u +- error it may go anywhere
                moved = max(moved, min(2, error))   # its slope of at most 1 takes it
            size += max(slope * error, moved) / unit
    return size


# monotone, so moved most at the ends, where SymPy has no derivative or it is infinite
MONOTONE = (sp.floor, sp.ceiling, sp.asin, sp.acos, sp.acosh)


def _held_exactly(argument: Expr, exact_rationals: bool) -> bool:
    """Whether an argument is not rounded: an index, or a rational number where rationals are
    exact, and otherwise one whose denominator is a power of 2 and whose numerator fits the
    working precision.  A number is asked what it is, not SymPy's assumptions about it,
    which hold sin(log(1 + 10^-19)) an integer; an integer-valued function of rounded values
    (sign(u), floor(u)) is as rounded as they are."""
    if argument.is_Rational:
        return exact_rationals or (argument.q & (argument.q - 1) == 0
                                   and abs(argument.p).bit_length() <= mpmath.mp.prec)
    return not argument.is_number and bool(argument.is_integer) \
        and all(isinstance(x, Symbol) and x.is_integer for x in argument.free_symbols) \
        and not argument.atoms(sp.Indexed)


def _slope(expr: Expr, n: int, value_of) -> mpmath.mpf | None:
    """|df/du_n| at the point: infinite at a pole of the derivative (sqrt at 0), None where
    SymPy cannot take it or it is no real number there."""
    derivative = partial_derivative(expr, n)
    if derivative is None:
        return None
    try:
        slope = value_of(derivative)
    except ArithmeticError:
        return mpmath.inf
    except (TypeError, ValueError, UnsupportedExpression):
        return None
    if not isinstance(slope, mpmath.mpf) or mpmath.isnan(slope):
        return None
    return abs(slope)


def partial_derivative(expr: Expr, n: int) -> Expr | None:
    """df/du_n for expr = f(u_1, ..., u_k), as an expression in the u's; None where SymPy
    cannot take it.  Built around expr's own u_n: the values found for its subtrees are
    looked up by identity, where an equal copy from another tree would be compared whole."""
    taken = _derivative_at_stand_in(expr.func, n, expr.args[:n] + expr.args[n + 1:])
    if taken is None:
        return None
    slope, stand_in = taken
    return slope.xreplace({stand_in: expr.args[n]})


@lru_cache(maxsize=4096)
def _derivative_at_stand_in(func, n: int, others: tuple) -> tuple | None:
    """d/du f(others with u put in at position n), and u; None where SymPy cannot take it."""
    stand_in = sp.Dummy(real=True)  # a complex one makes d|u|/du hold d(re u)/du
    slope = sp.diff(func(*others[:n], stand_in, *others[n:]), stand_in)
    return None if slope.has(sp.Derivative, sp.Subs) else (slope, stand_in)


def _moved(expr: Expr, n: int, at: list, error, value, value_of, apply) -> mpmath.mpf:
    """How far expr moves when its argument n (its arguments' values ``at``) moves by ``error``
    either way (a way in which it is no real number does not count; if neither is, nothing is
    known)."""
    moves = []
    for shifted in (at[n] + error, at[n] - error):
        values = [*at[:n], shifted, *at[n + 1:]]
        try:
            moved = apply(expr, values) if apply else None
            if moved is None:
                moved = value_of(expr.func(*(sp.Float(v, mpmath.mp.dps + 10) for v in values)))
        except (ArithmeticError, TypeError, ValueError, UnsupportedExpression):
            continue
        if not isinstance(moved, mpmath.mpc):
            moves.append(abs(moved - value))
    if not moves:
        raise ValueError(f"{expr} is no real number near its value, to weigh its rounding")
    return max(moves)


def small_integers(symbol: Symbol, count: int, nonzero: bool = False) -> tuple:
    """The ``count`` integers nearest 0 (0, 1, -1, 2, -2, ... in that order) that the symbol's
    declarations allow, sign and parity: where a claim about an integer is most often false."""
    found: list = []
    for size in range(1 if nonzero else 0, 10**6):
        for value in map(sp.Integer, (size, -size) if size else (0,)):
            if all(getattr(symbol, fact) in (None, getattr(value, fact)) for fact in
                   ("is_positive", "is_negative", "is_nonnegative", "is_nonpositive",
                    "is_zero", "is_even", "is_odd")):
                found.append(value)
        if len(found) >= count:
            return tuple(found[:count])
    raise ValueError(f"no integer fits {symbol}'s declarations")


def random_value(symbol: Symbol, rng: random.Random):
    """A seeded value the symbol's assumptions allow: integers as such (of either sign unless
    declared otherwise), other reals as fractions."""
    if symbol.is_integer:
        # from 1: a claim false only at small c ((M - 1)^(c - 3) at c = 2) is seen there
        low = 1 if symbol.is_positive else 0 if symbol.is_nonnegative else -40
        high = -1 if symbol.is_negative else 0 if symbol.is_nonpositive else 40
        value = rng.randint(low, high)
        parity = 0 if symbol.is_even else 1 if symbol.is_odd else value % 2
        if value % 2 != parity:  # an even symbol is never given 7 (review round 52)
            value += 1 if value < high else -1
        return sp.Integer(value)
    value = sp.Rational(rng.randint(11, 97), rng.randint(7, 31))
    if symbol.is_positive or symbol.is_nonnegative:
        return value
    if symbol.is_negative or symbol.is_nonpositive:
        return -value
    return value * rng.choice([1, -1])
