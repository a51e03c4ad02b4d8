"""Inequality steps: ``a <= b`` because b is a with one part replaced by a bound on that part, at
a place where a grows with it (Lean's ``calc`` with ``<=`` steps, and its ``gcongr``).

A bound rule offers bounds on a sub-expression: ``x_t <= max_l x_l``, ``sum_l f(l) >= max_l f(l)``
for f >= 0, ``x <= sup x`` from interval arithmetic.  Where the part sits decides which bound
moves the whole up: in ``1 - sum_i p_i^2`` the sum enters with a minus sign, so a lower bound on
the sum is an upper bound on the whole.  The signs that decide this (is this cofactor >= 0?) come
from :mod:`sdpa_proofs.intervals`; a place whose direction is unknown is never used.
"""

from __future__ import annotations

from collections.abc import Iterator

import sympy as sp
from sympy import Add, Expr, Mul, Pow, Sum

from .algebra import canonical, expand_to_the_same, without_numbers
from .expressions import E, MaxOver, index_symbols
from .intervals import Ranges, enclosure, forward, is_nonnegative, is_positive, known_le, sign
from .realnumbers import certainly_positive, written_with
from .relations import upward
from .rules import Context, Rule, rewrite_everywhere
from .text import show
from .verdicts import FAIL, PASS, Verdict

UPPER, LOWER = "upper", "lower"
SEARCH_DEPTH = 3  # bounds used in one step
SEARCH_WIDTH = 200  # expressions kept per depth


class BoundRule(Rule):
    """A rule that justifies inequalities: ``bounds(node, ranges, maxima)`` yields (bound, side)
    with side UPPER (node <= bound) or LOWER (node >= bound), each true under its conditions."""

    def rewrite(self, node, ctx):
        return None  # a bound is not an equality

    def bounds(self, node: Expr, ranges: Ranges, maxima: list) -> Iterator[tuple[Expr, str]]:
        raise NotImplementedError

    def establish(self, ctx: Context) -> str | None:
        """Why the rule's facts do not hold under ``ctx.model``, or None when they do."""
        return None


class AtMostMax(BoundRule):
    name = "at_most_max"
    fact = "x_t <= max_l x_l for every t in the range of l (also as a factor: x_t y <= (max x) y " \
           "for y >= 0)"
    latex = r"$x_t \le \max_l x_l$"

    def bounds(self, node, ranges, maxima):
        for maximum in maxima:
            (index, lower, upper), = maximum.limits
            for t in sorted(index_symbols(node), key=sp.default_sort_key):
                reach = ranges.of(t)
                if reach is None or not (known_le(lower, reach[0])
                                         and known_le(reach[1], upper)):
                    continue
                term = maximum.function.xreplace({index: t})
                if node == term:
                    yield maximum, UPPER
                elif isinstance(node, Mul) and _divides(term, node):
                    # node = term * rest, so node <= max * rest when rest >= 0
                    rest = node / term
                    direction = sign(rest, ranges)
                    if direction is not None:
                        yield maximum * rest, UPPER if direction > 0 else LOWER


def _divides(term: Expr, node: Expr) -> bool:
    """Every base of ``term`` is a base of ``node``: term shows in the product.  Only a filter on
    where to offer the bound: node = term * (node / term) holds whatever it says."""
    have = node.as_powers_dict()
    return all(base in have for base in term.as_powers_dict())


class SumAtLeastMax(BoundRule):
    name = "sum_at_least_max"
    fact = "sum_l f(l) >= max_l f(l) for a non-empty range and f >= 0"
    latex = r"$\sum_l f_l \ge \max_l f_l$ for $f \ge 0$"

    def bounds(self, node, ranges, maxima):
        if isinstance(node, Sum) and len(node.limits) == 1:
            (index, lower, upper), = node.limits
            if known_le(lower, upper) and is_nonnegative(node.function,
                                                          ranges.with_limits(node.limits)):
                yield MaxOver(node.function, (index, lower, upper)), LOWER


class WithinRange(BoundRule):
    name = "range"
    fact = "a quantity lies within its range (0 <= p_i <= 1, max_j p_j <= 1, e^x >= 0, ...), " \
           "by interval arithmetic"
    latex = "range"

    def bounds(self, node, ranges, maxima):
        if node.is_number or isinstance(node, Add):
            return
        lo, hi = enclosure(node, ranges)
        if hi.is_finite and hi != node:
            yield hi, UPPER
        if lo.is_finite and lo != node:
            yield lo, LOWER


def moves(expr: Expr, rules: list[BoundRule], ranges: Ranges, maxima: list,
          polarity: int = 1) -> Iterator[tuple[Expr, int]]:
    """Every replacement of one part of ``expr`` by a bound, with its effect on the whole: +1 if
    the result is >= expr, -1 if <= expr.  ``polarity``: how expr moves the whole (+1 with it,
    -1 against it)."""
    for rule in rules:
        for bound, side in rule.bounds(expr, ranges, maxima):
            yield bound, polarity * (1 if side == UPPER else -1)
    for position, child, direction, inner, keeps_domain in _monotone_children(expr, ranges):
        for new_child, effect in moves(child, rules, inner, maxima, polarity * direction):
            if keeps_domain(new_child):
                args = list(expr.args)
                args[position] = new_child
                yield expr.func(*args), effect


def _monotone_children(expr: Expr, ranges: Ranges):
    """(position, child, +1 or -1, ranges inside, domain check) for each argument in which
    ``expr`` is monotone; the domain check says whether a replacement keeps it so."""
    anywhere = (lambda new: True)  # noqa: E731 - a predicate that always holds
    if isinstance(expr, Add):
        return [(n, a, 1, ranges, anywhere) for n, a in enumerate(expr.args)]
    if isinstance(expr, Mul):
        found = []
        for n, factor in enumerate(expr.args):
            direction = sign(Mul(*(f for m, f in enumerate(expr.args) if m != n)), ranges)
            if direction is not None:
                found.append((n, factor, direction, ranges, anywhere))
        return found
    if isinstance(expr, Pow) and expr.exp.is_number and certainly_positive(expr.exp):
        if expr.exp.is_Integer and expr.exp % 2 == 1:
            return [(0, expr.base, 1, ranges, anywhere)]
        if is_nonnegative(expr.base, ranges):  # x^a grows with x on x >= 0, so stay there
            return [(0, expr.base, 1, ranges, lambda new: is_nonnegative(new, ranges))]
        return []
    if isinstance(expr, MaxOver) or isinstance(expr, Sum) and forward(expr.limits):
        return [(0, expr.function, 1, ranges.with_limits(expr.limits), anywhere)]
    if isinstance(expr, (sp.exp, E)):  # e^x grows with x; E[X] <= E[Y] when X <= Y
        return [(0, expr.args[0], 1, ranges, anywhere)]
    if isinstance(expr, sp.log) and is_positive(expr.args[0], ranges):  # on x > 0, stay there
        return [(0, expr.args[0], 1, ranges, lambda new: is_positive(new, ranges))]
    return []


def _maxima(*exprs: Expr) -> list[MaxOver]:
    found = set().union(*(e.atoms(MaxOver) for e in exprs))
    return sorted(found, key=sp.default_sort_key)


def bound_check(before: Expr, after: Expr, relation: str, rules: list[Rule],
                ctx: Context) -> Verdict:
    """Whether ``before relation after`` follows from the bound rules among ``rules`` (each
    used at most SEARCH_DEPTH times, at places where it moves the whole the right way), the
    other rules and algebra; with no bound rule, whether after - before has the right sign."""
    if relation in ("<", ">"):
        return Verdict(FAIL, "bounds and interval arithmetic establish ≤ and ≥ only; a strict "
                             "step needs a strict fact, which these rules do not provide")
    want = upward(relation)
    bounds = [r for r in rules if isinstance(r, BoundRule)]
    equalities = [r for r in rules if not isinstance(r, BoundRule)]
    if not bounds:  # the equality rules first (each keeps the value), then the sign
        return sign_verdict(rewrite_everywhere(before, equalities, ctx),
                            rewrite_everywhere(after, equalities, ctx), relation, ctx)
    for rule in bounds:
        problem = rule.establish(ctx)
        if problem:
            return Verdict(FAIL, problem)
    maxima = _maxima(before, after)
    names = ", ".join(repr(r) for r in rules)
    # a bound can be read either way: from before up to after, or from after down to before
    from_before = _search(before, after, want, bounds, equalities, ctx, maxima)
    if from_before is True:
        return Verdict(PASS)
    from_after = _search(after, before, -want, bounds, equalities, ctx, maxima)
    if from_after is True:
        return Verdict(PASS)
    if from_before is not None or from_after is not None:
        opposite = "≥" if want > 0 else "≤"
        gives = "gives" if len(rules) == 1 else "give"
        return Verdict(FAIL, f"{names} {gives} {show(before)} {opposite} {show(after)}: the "
                             "bound goes the other way")
    return Verdict(FAIL, f"no use of {names} at a place where the expression grows the right "
                         f"way turns {show(before)} into {show(after)}")


def _search(start: Expr, goal: Expr, want: int, bounds: list, equalities: list, ctx: Context,
            maxima: list) -> bool | Expr | None:
    """True if up to SEARCH_DEPTH bound moves, each moving the whole in direction ``want``,
    lead from start to goal (up to the equality rules and algebra); else a move sequence that
    reaches goal in the other direction, if one was seen; else None."""
    ranges = Ranges(ctx.model.dimension)
    target = rewrite_everywhere(goal, equalities, ctx)
    frontier = list(dict.fromkeys([start, rewrite_everywhere(start, equalities, ctx)]))
    wrong_way = None
    for _ in range(SEARCH_DEPTH):
        found = []
        for state in frontier:
            for new, effect in moves(state, bounds, ranges, maxima):
                reached = rewrite_everywhere(new, equalities, ctx)
                if expand_to_the_same(reached, target):
                    if effect == want:
                        return True
                    wrong_way = new
                if effect == want:
                    found.append(new)
        frontier = list(dict.fromkeys(found))[:SEARCH_WIDTH]
    return wrong_way


def sign_verdict(before: Expr, after: Expr, relation: str, ctx: Context,
                 forms=None) -> Verdict:
    """``before <= after`` (or >=) by the sign of the difference: interval arithmetic on the
    difference as written, expanded and factored."""
    difference = upward(relation) * (sp.sympify(after) - sp.sympify(before))
    ranges = Ranges(ctx.model.dimension)
    for form in forms or _forms(difference, ctx.numbers):
        if is_nonnegative(form, ranges):
            return Verdict(PASS)
    return Verdict(FAIL, f"interval arithmetic does not show {show(difference)} ≥ 0")


def _forms(difference: Expr, numbers: dict) -> Iterator[Expr]:
    """The difference as written, expanded and factored, the numbers kept out of SymPy's
    rewriting (``without_numbers``; ``numbers``: the unknowns already put in for them) and put
    back unevaluated, where interval arithmetic encloses them: expanded with them,
    d^(1 + t) - d was 0 for a t SymPy takes for 0."""
    yield _put_back(difference, numbers)
    (plain,), numbers = without_numbers(difference, known=numbers)
    expanded = canonical(plain)
    yield _put_back(expanded, numbers)
    try:
        factored = sp.factor(expanded)
    except (sp.PolynomialError, NotImplementedError, ValueError, TypeError):
        return
    yield _put_back(factored, numbers)


def _put_back(expr: Expr, numbers: dict) -> Expr:
    """The numbers in place of their unknowns, as they stand (evaluated, SymPy would rewrite
    them again)."""
    return written_with(expr, numbers)


BOUND_RULES = (AtMostMax(), SumAtLeastMax(), WithinRange())

__all__ = ["BoundRule", "AtMostMax", "SumAtLeastMax", "WithinRange", "BOUND_RULES",
           "bound_check", "sign_verdict", "moves"]
