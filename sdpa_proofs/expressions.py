"""The vocabulary of derivations: random vectors, E, Var, sd and sums over index sets.

Everything is a SymPy expression.  E, Var and SD are unevaluated functions: no rule of SymPy's
own ever rewrites them, so each probabilistic step has to be justified by a named rule.
"""

from __future__ import annotations

from functools import cached_property

import sympy as sp
from sympy import Expr, Function, Indexed, IndexedBase, Sum, Symbol
from sympy.printing.precedence import PRECEDENCE

from . import (
    sympyfixes,  # noqa: F401 - SymPy's false assumptions corrected before any use
    sympywork,  # noqa: F401 - deductions SymPy repeats, done once
)
from .errors import BadInput
from .realnumbers import built_as_written, proven_sign, put_in


class RandomVector(IndexedBase):
    """A random vector; its coordinates ``v[i]`` are the random variables of a derivation.

    What it is declared is part of what it is.  SymPy holds q declared real and q declared real
    and finite equal (the same facts follow), so that its cache hands back q_1 k_1 built before
    for Q_1 k_1, and validation, which refuses any declaration beyond real, never sees Q's
    (review round 58)."""

    @sympywork.content_once
    def _hashable_content(self) -> tuple:
        return super()._hashable_content() + self.declared

    @cached_property
    def declared(self) -> tuple:
        """The assumptions its label was declared with, sorted; commutative, which every
        symbol is unless declared otherwise, only when it is declared otherwise."""
        return tuple(sorted((name, bool(value)) for name, value
                            in getattr(self.label, "_assumptions_orig", {}).items()
                            if value is not None and (name, bool(value)) != ("commutative",
                                                                             True)))


class SymmetricMatrix(IndexedBase):
    """A deterministic symmetric matrix such as a covariance block: A[i, j] = A[j, i]."""


def symmetric_order(expr: Expr) -> Expr:
    """Write every entry of a symmetric matrix with its indices in a fixed order."""
    if isinstance(expr, Indexed) and isinstance(expr.base, SymmetricMatrix):
        return expr.base[tuple(sorted(expr.indices, key=sp.default_sort_key))]
    if not expr.args:
        return expr
    return expr.func(*(symmetric_order(a) for a in expr.args))


class E(Function):
    """Expectation E[X]; deliberately opaque to SymPy's algebra."""

    nargs = 1
    is_real = True



Expectation = E  # E under a name that SymPy's E (Euler's number) and sympy.stats.E cannot shadow

class Var(Function):
    """Variance Var(X) = E[(X - E[X])^2]."""

    nargs = 1
    is_real = True
    is_nonnegative = True


class SD(Function):
    """Standard deviation sd(X) = sqrt(Var(X))."""

    nargs = 1
    is_real = True
    is_nonnegative = True


class Cov(Function):
    """Covariance Cov(X, Y) = E[(X - E[X])(Y - E[Y])]."""

    nargs = 2
    is_real = True


MOMENT_FUNCTIONS = (E, Var, SD, Cov)


class SumOverDistinct(Expr):
    """The sum over ordered pairs of distinct indices: sum_{i != j} f(i, j), with 1 <= i, j <= n.

    SymPy has no sum over i != j, and writing it as a double sum minus the diagonal would hide
    exactly the step the seed's proof turns on.
    """

    is_commutative = True

    def __new__(cls, function, i: Symbol, j: Symbol, upper) -> SumOverDistinct:
        function, upper = sp.sympify(function), sp.sympify(upper)
        if i == j:
            raise ValueError("a sum over i != j needs two different index symbols")
        return Expr.__new__(cls, function, i, j, upper)

    @property
    def function(self) -> Expr:
        return self.args[0]

    @property
    def indices(self) -> tuple[Symbol, Symbol]:
        return self.args[1], self.args[2]

    @property
    def upper(self) -> Expr:
        return self.args[3]

    @property
    def free_symbols(self) -> set:
        return (self.function.free_symbols - set(self.indices)) | self.upper.free_symbols

    def _eval_subs(self, old, new):
        if old in self.indices:
            return self
        return None

    def doit(self, **hints) -> Expr:
        """Expand into explicit terms when the upper limit is a concrete integer."""
        if not self.upper.is_Integer:
            return self
        i, j = self.indices
        n = int(self.upper)
        return sp.Add(*(self.function.xreplace({i: a, j: b})
                        for a in range(1, n + 1) for b in range(1, n + 1) if a != b))


SUMS = (Sum, SumOverDistinct)


class MaxOver(Expr):
    """max_{l=a..b} f(l): the largest of finitely many values, such as max_j p_j.

    SymPy's Max takes its arguments one by one, so it cannot stand for the largest of n values
    with n symbolic; this binds an index over a range, as Sum does."""

    is_commutative = True
    precedence = PRECEDENCE["Mul"]  # printed like a sum: (max_l x_l)^2 needs its parentheses

    def __new__(cls, function, limit) -> MaxOver:
        index, lower, upper = (sp.sympify(x) for x in limit)
        return Expr.__new__(cls, sp.sympify(function), sp.Tuple(index, lower, upper))

    @property
    def function(self) -> Expr:
        return self.args[0]

    @property
    def limits(self) -> tuple:
        return (tuple(self.args[1]),)

    @property
    def index(self) -> Symbol:
        return self.args[1][0]

    @property
    def bound_symbols(self) -> list:
        return [self.index]

    @property
    def free_symbols(self) -> set:
        _, lower, upper = self.args[1]
        return (self.function.free_symbols - {self.index}) | lower.free_symbols | \
            upper.free_symbols

    def _eval_subs(self, old, new):
        if old == self.index:
            return self
        return None

    def doit(self, **hints) -> Expr:
        """The largest of the written-out values when the range is concrete."""
        index, lower, upper = self.args[1]
        if not (lower.is_Integer and upper.is_Integer):
            return self
        values = [put_in(self.function, {index: sp.Integer(v)})
                  for v in range(int(lower), int(upper) + 1)]
        # SymPy compares symbolic arguments pairwise to drop dominated ones, at great cost and
        # to no end here: the values are compared once numbers are put in
        if not all(v.is_number for v in values):
            return sp.Max(*values, evaluate=False)
        # SymPy compares the values by evalf: its choice is checked
        return built_as_written(sp.Max(*values, evaluate=False), kept=values)


BINDERS = SUMS + (MaxOver,)  # everything that binds an index over a range
# kinks where arguments tie (|u| where u = 0) and jumps: SymPy differentiates them anyway,
# counting each tie as a half (d|u|/du is sign(u), 0 at the kink)
NOT_DIFFERENTIABLE = (sp.Max, sp.Min, MaxOver, sp.Abs, sp.sign, sp.floor, sp.ceiling,
                      sp.Heaviside)


def rebind(template: Expr, body: Expr) -> Expr:
    """A sum with the same bound indices and range as ``template`` around a new ``body``."""
    if isinstance(template, SumOverDistinct):
        return SumOverDistinct(body, *template.indices, template.upper)
    return Sum(body, *template.limits)


def is_random_coordinate(expr: Expr) -> bool:
    return isinstance(expr, Indexed) and isinstance(expr.base, RandomVector)


def random_coordinates(expr: Expr) -> set[Indexed]:
    """The random coordinates occurring outside any E, Var or SD (those are numbers)."""
    if is_random_coordinate(expr):
        return {expr}
    if isinstance(expr, MOMENT_FUNCTIONS):
        return set()
    found: set[Indexed] = set()
    for arg in expr.args:
        found |= random_coordinates(arg)
    return found


def pole(x: Expr) -> str:
    """Why x may be infinite for some value of the coordinates, or "": a denominator that may
    be 0 (1/q, cosh(q)/q, 1/q^2), a logarithm of what may be 0 (log q^2), or a function not
    known to be finite wherever the coordinates may be (tan q, sec q, gamma(q)).  Near such a
    pole E[x] may not exist."""
    for power in x.atoms(sp.Pow):  # an exponent of unknown sign (sigma - 1) may be negative
        if _may_be_negative(power.exp) and random_coordinates(power.base) \
                and power.base.is_positive is not True:
            return f"{power.base} may be 0, where {power} may have a pole"
    for logarithm in x.atoms(sp.log):  # SymPy holds log u finite where u is: not at u = 0
        if random_coordinates(logarithm) and logarithm.args[0].is_positive is not True:
            return f"{logarithm.args[0]} may be 0, where {logarithm} is infinite"
    for function in x.atoms(sp.Function):
        if random_coordinates(function) and function.is_finite is not True:
            return (f"{function} is not known to be finite for every value of the "
                    "coordinates (a pole)")
    return ""


def _may_be_negative(exponent: Expr) -> bool:
    if exponent.is_number:
        return proven_sign(exponent) not in (0, 1)
    return exponent.is_nonnegative is not True


def is_deterministic(expr: Expr) -> bool:
    return not random_coordinates(expr)


def bound_indices(expr: Expr) -> tuple[Symbol, ...]:
    """The index symbols a sum binds, outermost first."""
    if isinstance(expr, Sum):
        return tuple(limit[0] for limit in expr.limits)
    if isinstance(expr, SumOverDistinct):
        return expr.indices
    if isinstance(expr, MaxOver):
        return (expr.index,)
    return ()


def bound_renamed_apart(expr: Expr, names: set) -> Expr:
    """expr with each index that a sum or maximum binds and that is one of ``names`` renamed to
    a fresh index of the same kind: putting a name in for a free index then captures nothing,
    and no bound occurrence is taken for a free one."""
    if not expr.args:
        return expr
    clash = [x for x in bound_indices(expr) if x in names]
    if clash:
        expr = expr.xreplace({x: sp.Dummy(x.name, **x.assumptions0) for x in clash})
    args = [bound_renamed_apart(a, names) for a in expr.args]
    return expr if all(new is old for new, old in zip(args, expr.args)) else expr.func(*args)


def summand(expr: Expr) -> Expr:
    return expr.function


def index_symbols(expr: Expr) -> set:
    """Index symbols (and integer indices) that occur free in ``expr``: unbound by any sum.
    The arguments of a Kronecker delta are indices too."""
    if isinstance(expr, Indexed | sp.KroneckerDelta):
        found = set()
        for index in (expr.indices if isinstance(expr, Indexed) else expr.args):
            found |= {index} if index.is_Integer else set(index.free_symbols)
        return found
    if isinstance(expr, BINDERS):
        return index_symbols(summand(expr)) - set(bound_indices(expr))
    found = set()
    for arg in expr.args:
        found |= index_symbols(arg)
    return found


def moment_atoms(expr: Expr) -> set[Expr]:
    """The outermost E, Var and SD sub-expressions."""
    if isinstance(expr, MOMENT_FUNCTIONS):
        return {expr}
    found: set[Expr] = set()
    for arg in expr.args:
        found |= moment_atoms(arg)
    return found


def unfold(expr: Expr, definitions: dict) -> Expr:
    """Replace abbreviations (S := sum_i q_i k_i) by what they stand for; repeated to a fixpoint.
    A key with symbolic indices is a pattern: {p[l]: e^{z_l} / sum_m e^{z_m}} unfolds every
    p[t] with t put for l."""
    plain = {k: v for k, v in definitions.items() if not _is_pattern(k)}
    patterns = [(k, v) for k, v in definitions.items() if _is_pattern(k)]
    for _ in range(len(definitions) + 1):
        new = expr.xreplace(plain)
        for key, value in patterns:
            new = new.replace(
                lambda e, key=key: isinstance(e, Indexed) and e.base == key.base
                and len(e.indices) == len(key.indices),
                lambda e, key=key, value=value: instantiate(key, value, e.indices))
        if new == expr:
            return new
        expr = new
    raise BadInput("the abbreviations refer to each other in a cycle: "
                   + ", ".join(str(k) for k in definitions))


def instantiate(key: Indexed, value: Expr, indices: tuple) -> Expr:
    """The value of the pattern ``key`` (p[l] := ...) at ``indices``.  An index the value's own
    sums bind is renamed first where it clashes, so that w[m] := sum_m E[q_l q_m] at l = m does
    not become sum_m E[q_m q_m]."""
    clash = set().union(*(sp.sympify(x).free_symbols for x in indices)) | set(key.indices)
    bound = {v for binder in value.atoms(*BINDERS) for v in bound_indices(binder)}
    value = value.xreplace({v: sp.Dummy(v.name, **v._assumptions_orig) for v in bound & clash})
    return value.xreplace(dict(zip(key.indices, indices)))


def _is_pattern(key: Expr) -> bool:
    return isinstance(key, Indexed) and all(i.is_Symbol for i in key.indices)
