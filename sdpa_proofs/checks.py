"""The three checks of an equality ``before = after`` under a model.

- ``rule_check``: the named rules turn ``before`` into ``after`` (up to plain algebra);
- ``exact_check``: the exact moment engine gives both sides the same closed form for symbolic d;
- ``numeric_check``: both sides, as written, integrated against the model's density at concrete
  d and parameter values agree to the required number of significant digits.

Each returns a Verdict that is "pass", "fail" or "undecided"; only an established equality passes.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import mpmath
import numpy as np
import sympy as sp
from sympy import Derivative, Expr, Indexed

from .algebra import (
    algebraically_equal,
    canonical,
    differs_somewhere,
    random_value,
    readable,
    simplifies_to_zero,
)
from .bounds import bound_check, sign_verdict, upward
from .derivation import SYMBOLS
from .expressions import (
    BINDERS,
    MOMENT_FUNCTIONS,
    SUMS,
    Cov,
    E,
    MaxOver,
    Var,
    bound_indices,
    index_symbols,
    random_coordinates,
    symmetric_order,
)
from .indexing import UnsupportedExpression
from .models import Model
from .moments import exact_cases
from .rules import (
    Context,
    ExpandSquare,
    OffDiagonalAsDifference,
    Rule,
    pointwise_normal_form,
    rewrite_everywhere,
)
from .text import show
from .verdicts import FAIL, PASS, UNDECIDED, Verdict, combine


def rule_check(before: Expr, after: Expr, rules: list[Rule], model: Model,
               distinct: frozenset = frozenset(), relation: str = "=") -> Verdict:
    """Does rewriting with ``rules`` (everywhere, to a fixpoint) make the two sides equal?  For
    an inequality: do the rules' bounds, used where they move the whole the right way, lead
    from one side to the other (see :mod:`sdpa_proofs.bounds`)?"""
    before, after = sp.sympify(before), sp.sympify(after)
    if relation != "=":
        return bound_check(before, after, relation, rules, Context(model, distinct))
    strict = Context(model, distinct, strict=True)
    reached = rewrite_everywhere(before, rules, strict)
    target = rewrite_everywhere(after, rules, strict)
    equal = algebraically_equal(reached, target)
    if equal:
        return Verdict(PASS)
    loose = Context(model, distinct, strict=False)
    if algebraically_equal(rewrite_everywhere(before, rules, loose),
                           rewrite_everywhere(after, rules, loose)) and loose.violations:
        return Verdict(FAIL, "precondition fails under the model: " + "; ".join(loose.violations))
    names = ", ".join(r.name for r in rules)
    if equal is None:
        return Verdict(UNDECIDED, f"could not decide whether {names} turns {show(reached)} "
                                  f"into {show(target)}")
    return Verdict(FAIL, f"{names} turns the previous expression into {show(reached)}, "
                         f"which is not {show(target)}")


def exact_check(before: Expr, after: Expr, model: Model,
                distinct: frozenset = frozenset(), relation: str = "=") -> Verdict:
    """Closed forms of both sides for symbolic d, in every case of coinciding free indices."""
    before, after = sp.sympify(before), sp.sympify(after)
    if relation != "=":
        return _exact_inequality(before, after, model, distinct, relation)
    if is_pointwise(before, after):
        return _pointwise_exact(before, after, model, distinct)
    cases = exact_cases(before, after, model, distinct)
    while True:
        try:
            case, lhs, rhs = next(cases)
        except StopIteration:
            return Verdict(PASS)
        except UnsupportedExpression as error:
            return Verdict(UNDECIDED, f"exact engine: {error}")
        where = _describe_case(case)
        if lhs.has(*SUMS) or rhs.has(*SUMS):  # a model whose moments are sums of entries
            verdict = _compare_sums(lhs, rhs, model, where)
            if verdict.status != PASS:
                return verdict
            continue
        difference = sp.expand(lhs - rhs)
        if difference == 0 or simplifies_to_zero(difference):
            continue
        if differs_somewhere(difference, probes=5):
            return Verdict(FAIL, f"exact values differ{where}: {show(lhs)} versus {show(rhs)}",
                           counterexample={"exact": True, "case": where.strip(" ,"),
                                           "lhs": show(lhs), "rhs": show(rhs)})
        return Verdict(UNDECIDED, f"could not show {show(lhs)} = {show(rhs)}{where}")


def is_pointwise(before: Expr, after: Expr) -> bool:
    """A statement about the coordinates themselves (no expectation around them), such as the
    softmax Jacobian: it must hold at every point, not on average."""
    return bool(random_coordinates(before) | random_coordinates(after))


def _pointwise_exact(before: Expr, after: Expr, model: Model, distinct: frozenset) -> Verdict:
    """Differentiate (SymPy) and sift the sums of Kronecker deltas, then compare normal forms for
    symbolic dimension; refute with exact values at concrete coordinates."""
    forms = [pointwise_normal_form(x, model, distinct) for x in (before, after)]
    if sp.expand(forms[0] - forms[1]) == 0 or simplifies_to_zero(forms[0] - forms[1]):
        return Verdict(PASS)
    rng = random.Random(20261129)
    for dim in (2, 3):
        for indices in concrete_index_values([before, after], distinct, dim):
            sides = [concretise(f, {model.dimension: sp.Integer(dim)}, indices).doit()
                     for f in forms]
            values = {c: sp.Rational(rng.randint(-30, 30), rng.randint(5, 13))
                      for c in random_coordinates(sides[0]) | random_coordinates(sides[1])}
            values.update(arbitrary_values(sides))
            difference = sp.N((sides[0] - sides[1]).xreplace(values), 50)
            if difference.is_number and abs(difference) > mpmath.mpf(10) ** -30:
                where = {str(model.dimension): dim, **{str(k): int(v) for k, v in indices.items()},
                         **{str(c): str(v) for c, v in values.items()}}
                return Verdict(FAIL, f"the sides differ at {_format_point(where)}",
                               counterexample={"exact": True, **where})
    return Verdict(UNDECIDED, f"could not show {show(forms[0])} = {show(forms[1])}")


def _exact_inequality(before: Expr, after: Expr, model: Model, distinct: frozenset,
                      relation: str) -> Verdict:
    """The sign of the difference of the exact forms (pointwise normal forms, or closed moments
    for symbolic d) by interval arithmetic; failing that, a search for a counterexample in
    exact arithmetic at concrete dimensions.  The proof for every dimension is then the rule
    check's, and the reason says so."""
    context = Context(model, distinct)
    if is_pointwise(before, after):
        forms = [pointwise_normal_form(x, model, distinct) for x in (before, after)]
        cases = [({}, *forms)]
    else:
        try:
            cases = list(exact_cases(before, after, model, distinct))
        except UnsupportedExpression as error:
            return Verdict(UNDECIDED, f"exact engine: {error}")
    if all(sign_verdict(lhs, rhs, relation, context).passed for _, lhs, rhs in cases):
        return Verdict(PASS, "the exact difference has the right sign for every dimension "
                             "(interval arithmetic)")
    return _search_counterexample(cases, model, distinct, relation)


EXACT_DIMENSIONS = (2, 3, 4)


def _search_counterexample(cases: list, model: Model, distinct: frozenset,
                           relation: str) -> Verdict:
    """Evaluate the exact forms at concrete dimensions, with coordinates z = log r for rational
    r (so e^z is exact) at ties, near one-hot points and random points, and parameters at the
    model's points; any point where the relation fails refutes the step."""
    want = upward(relation)
    tried = 0
    for dim in EXACT_DIMENSIONS:
        for _, lhs, rhs in cases:
            for indices in concrete_index_values([lhs, rhs], distinct, dim):
                for point in model.parameter_points:
                    substitution = model.concrete(point, dim)
                    difference = want * (concretise(rhs, substitution, indices)
                                         - concretise(lhs, substitution, indices))
                    for values in _exact_points(sorted(random_coordinates(difference),
                                                       key=sp.default_sort_key)):
                        value = sp.N(difference.xreplace(values), 60)
                        tried += 1
                        if not value.is_number or not value.is_comparable:
                            return Verdict(UNDECIDED, f"could not evaluate {show(difference)}")
                        if value < 0 or (relation in ("<", ">") and value == 0):
                            where = {str(model.dimension): dim,
                                     **{str(k): str(v) for k, v in point.items()},
                                     **{str(k): int(v) for k, v in indices.items()},
                                     **{f"exp({c})": str(sp.exp(v)) for c, v in values.items()}}
                            return Verdict(FAIL, f"the relation fails at {_format_point(where)}: "
                                                 f"the sides differ by {sp.N(value, 12)}",
                                           counterexample={"exact": True, **where})
    return Verdict(PASS, f"no counterexample at {tried} exact points "
                         f"(dimensions {', '.join(map(str, EXACT_DIMENSIONS))}: ties, near "
                         "one-hot, random); for every dimension the rule check is the proof")


def _exact_points(coordinates: list) -> Iterator[dict]:
    """Coordinates log r with r rational: all equal, one or two far ahead, and random."""
    if not coordinates:
        yield {}
        return
    rng = random.Random(20261129)
    count = len(coordinates)
    ratios = [[1] * count, [10**6] + [1] * (count - 1), [1] * (count - 1) + [10**6],
              [10**6, 10**6] + [1] * (count - 2) if count > 1 else [3]]
    ratios += [[sp.Rational(rng.randint(1, 60), rng.randint(1, 60)) for _ in coordinates]
               for _ in range(3)]
    for row in ratios:
        yield {c: sp.log(sp.Rational(r)) for c, r in zip(coordinates, row)}


def _compare_sums(lhs: Expr, rhs: Expr, model: Model, where: str) -> Verdict:
    """Closed forms that are sums of matrix entries: equal when their normal forms agree
    (products of sums nested, i != j sums as full minus diagonal, bound indices and symmetric
    entries in canonical order); unequal when they differ at a concrete d for random entries."""
    normal = [canonical(rewrite_everywhere(side, [ExpandSquare(), OffDiagonalAsDifference()],
                                           Context(model))) for side in (lhs, rhs)]
    if sp.expand(normal[0] - normal[1]) == 0:
        return Verdict(PASS)
    rng = random.Random(20261129)
    for dim in (3, 4):
        concrete = [expand_sums(side.xreplace({model.dimension: sp.Integer(dim)}))
                    for side in (lhs, rhs)]
        difference = symmetric_order(sp.expand(concrete[0] - concrete[1]))
        entries = {e: sp.Rational(rng.randint(-40, 40), rng.randint(3, 17))
                   for e in difference.atoms(Indexed)}
        if differs_somewhere(difference.xreplace(entries), probes=2):
            lhs_text, rhs_text = show(readable(lhs)), show(readable(rhs))
            return Verdict(FAIL, f"exact values differ{where}: {lhs_text} versus {rhs_text}",
                           counterexample={"exact": True, str(model.dimension): dim,
                                           "lhs": lhs_text, "rhs": rhs_text})
    return Verdict(UNDECIDED, f"could not show {show(readable(lhs))} = {show(readable(rhs))}"
                              f"{where}")


def _describe_case(case: dict) -> str:
    if len(case) < 2:
        return ""
    groups: dict = {}
    for index, block in case.items():
        groups.setdefault(block, []).append(str(index))
    equal = [" = ".join(sorted(g)) for g in groups.values() if len(g) > 1]
    return " when " + ", ".join(equal) if equal else " when the free indices are distinct"


@dataclass
class NumericSettings:
    digits: int = 30
    dimensions: tuple[int, ...] = (1, 2, 3)
    guard_digits: int = 15

    @property
    def dps(self) -> int:
        return self.digits + self.guard_digits


@dataclass
class _Evaluation:
    model: Model
    point: dict
    dps: int
    scale: mpmath.mpf = field(default_factory=lambda: mpmath.mpf(0))

    def value(self, expr: Expr) -> mpmath.mpf:
        """Numerical value of an expression whose sums are already expanded."""
        atoms = {atom: self.moment(atom) for atom in _moment_atoms(expr)}
        stand_ins = {atom: sp.Float(value, self.dps) for atom, value in atoms.items()}
        result = sp.N(expr.xreplace(stand_ins), self.dps)
        if not result.is_real:
            raise UnsupportedExpression(f"{expr} does not evaluate to a real number")
        return mpmath.mpf(result)

    def moment(self, atom: Expr) -> mpmath.mpf:
        """E, Var, sd and Cov from their definitions, each E by integration."""
        if isinstance(atom, E):
            return self.expectation(atom.args[0])
        centred = [x - sp.Float(self.expectation(x), self.dps) for x in atom.args]
        if isinstance(atom, Cov):
            return self.expectation(centred[0] * centred[1])
        variance = self.expectation(centred[0] ** 2)
        return variance if isinstance(atom, Var) else mpmath.sqrt(variance)

    def expectation(self, x: Expr) -> mpmath.mpf:
        """E[x] by quadrature against the model's density, exact for polynomials."""
        nested = {a: sp.Float(self.moment(a), self.dps) for a in _moment_atoms(x)}
        x = x.xreplace(nested)
        variables = sorted(random_coordinates(x), key=sp.default_sort_key)
        if not variables:
            return mpmath.mpf(sp.N(x, self.dps))
        degrees = {v: _degree(x, v) for v in variables}
        polynomial = all(deg is not None for deg in degrees.values())
        if not polynomial:
            terms = sp.Add.make_args(sp.expand(x))
            if len(terms) > 1:  # term by term: each integral over only the coordinates it uses
                return mpmath.fsum(self.expectation(term) for term in terms)
        f = sp.lambdify(variables, x, modules="mpmath")
        if not polynomial:
            value, magnitude = self._converged(f, x, variables)
        else:
            value, magnitude = self.model.integrate(f, variables, degrees, self.point, self.dps)
        self.scale = max(self.scale, magnitude)
        return value

    def _converged(self, f, x: Expr, variables: list) -> tuple:
        """E[f] for f not a polynomial (e^z, z e^z, ...): the model's Gauss rules with twice
        the points each time until two results agree to all but the guard digits; no
        agreement within the grid limit is no value (the check is then undecided)."""
        wanted = mpmath.mpf(10) ** -(self.dps - CONVERGED_GUARD)
        previous = None
        for degree in CONVERGENCE_DEGREES:
            if (degree // 2 + 1) ** len(variables) > MAX_GRID:
                break
            try:
                value, magnitude = self.model.integrate(
                    f, variables, dict.fromkeys(variables, degree), self.point, self.dps)
            except ValueError as error:  # the model has no rule for this integrand
                raise UnsupportedExpression(f"E[{x}]: {error}") from error
            if previous is not None and abs(value - previous) <= wanted * max(magnitude, 1):
                return value, magnitude
            previous = value
        raise UnsupportedExpression(f"E[{x}]: not a polynomial in the coordinates, and Gauss "
                                    f"quadrature did not converge within {MAX_GRID} points")


CONVERGENCE_DEGREES = (30, 62, 126, 254)  # 16, 32, 64, 128 points per latent
MAX_GRID = 20_000
CONVERGED_GUARD = 10  # digits of the working precision that two quadratures may disagree on


def _moment_atoms(expr: Expr) -> list[Expr]:
    if isinstance(expr, MOMENT_FUNCTIONS):
        return [expr]
    return [a for arg in expr.args for a in _moment_atoms(arg)]


def _degree(expr: Expr, v: Indexed) -> int | None:
    """Degree of a polynomial in v without expanding it; None if not a polynomial in v."""
    if expr == v:
        return 1
    if not expr.has(v):
        return 0
    if isinstance(expr, sp.Add):
        parts = [_degree(a, v) for a in expr.args]
        return None if None in parts else max(parts)
    if isinstance(expr, sp.Mul):
        parts = [_degree(a, v) for a in expr.args]
        return None if None in parts else sum(parts)
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp >= 0:
        base = _degree(expr.base, v)
        return None if base is None else base * int(expr.exp)
    return None


def expand_sums(expr: Expr) -> Expr:
    """Write out every sum whose limits are concrete integers (by substituting each value with
    xreplace, which also reaches derivative variables such as z_j in d/dz_j)."""
    if not expr.args:
        return expr
    expr = expr.func(*(expand_sums(a) for a in expr.args))
    if isinstance(expr, sp.Sum):
        terms = [expr.function]
        for index, lower, upper in expr.limits:
            if not (lower.is_Integer and upper.is_Integer):
                return expr
            terms = [t.xreplace({index: sp.Integer(v)}) for t in terms
                     for v in range(int(lower), int(upper) + 1)]
        return sp.Add(*terms)
    return sp.sympify(expr.doit(deep=False)) if isinstance(expr, BINDERS) else expr


def concretise(expr: Expr, substitution: dict, indices: dict | None = None) -> Expr:
    """Give the free indices their values (not the bound ones of the same name), substitute d
    and the parameters, write the sums out, then substitute the entries that writing out
    produced (matrix entries such as Sigma_qk[1, 1])."""
    expr = substitute_free(expr, indices or {})
    return expand_sums(expr.xreplace(substitution)).xreplace(substitution)


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


def concrete_index_values(exprs: list[Expr], distinct: frozenset, dim: int) -> list[dict]:
    """All assignments of values 1..dim to the free index symbols respecting ``distinct``."""
    names = sorted((s for e in exprs for s in index_symbols(e) if not s.is_Integer), key=str)
    names = list(dict.fromkeys(names))
    values = []
    for combo in itertools.product(range(1, dim + 1), repeat=len(names)):
        assignment = dict(zip(names, map(sp.Integer, combo)))
        if all(assignment.get(a, a) != assignment.get(b, b)
               for pair in distinct for a, b in [tuple(pair)]):
            values.append(assignment)
    return values


def matching_digits(a: mpmath.mpf, b: mpmath.mpf, scale: mpmath.mpf, required: int,
                    dps: int) -> float:
    """Significant digits to which a and b agree; relative to ``scale`` when both are ~0."""
    difference = abs(a - b)
    if difference == 0:
        return float(dps)
    magnitude = max(abs(a), abs(b))
    reference = magnitude if magnitude > scale * mpmath.mpf(10) ** -required else scale
    if reference == 0:
        return 0.0
    return float(min(dps, max(0, -mpmath.log10(difference / reference))))


def numeric_check(before: Expr, after: Expr, model: Model, settings: NumericSettings,
                  distinct: frozenset = frozenset(), relation: str = "=") -> Verdict:
    """Evaluate both sides as written at d in ``settings.dimensions``, every parameter point and
    every value of the free indices: expectations by exact quadrature against the model's
    density, identities in the coordinates pointwise at coordinates drawn from the model."""
    before, after = sp.sympify(before), sp.sympify(after)
    evaluate = _pointwise_pairs if is_pointwise(before, after) else _integrated_pair
    lowest = None
    with mpmath.workdps(settings.dps):
        for dim in settings.dimensions:
            for point in model.parameter_points:
                substitution = model.concrete(point, dim)
                for indices in concrete_index_values([before, after], distinct, dim):
                    sides = [concretise(x, substitution, indices) for x in (before, after)]
                    arbitrary = arbitrary_values(sides)
                    sides = [side.xreplace(arbitrary) for side in sides]
                    where = {str(model.dimension): dim,
                             **{str(k): str(v) for k, v in point.items()},
                             **{str(k): int(v) for k, v in indices.items()},
                             **{str(k): str(v) for k, v in arbitrary.items()}}
                    try:
                        pairs = list(evaluate(sides, model, substitution, point, dim))
                    except UnsupportedExpression as error:
                        return Verdict(UNDECIDED, f"numeric: {error}")
                    for lhs, rhs, scale, at in pairs:
                        if relation != "=":
                            verdict = _inequality_at(lhs, rhs, scale, relation, settings,
                                                     {**where, **at})
                            if not verdict.passed:
                                return verdict
                            continue
                        digits = matching_digits(lhs, rhs, scale, settings.digits, settings.dps)
                        lowest = digits if lowest is None else min(lowest, digits)
                        if digits < DIFFERENT_BELOW:
                            return _numeric_counterexample(lhs, rhs, digits, {**where, **at})
                        if digits < settings.digits:
                            return Verdict(UNDECIDED, f"only {digits:.1f} significant digits "
                                           f"agree at {_format_point({**where, **at})}, "
                                           f"{settings.digits} required", digits=digits)
    if relation != "=":
        return Verdict(PASS, "holds at every point evaluated")
    if lowest is None:
        return Verdict(UNDECIDED, "no concrete case to evaluate")
    return Verdict(PASS, digits=lowest)


def _inequality_at(lhs, rhs, scale, relation: str, settings: NumericSettings,
                   where: dict) -> Verdict:
    """lhs relation rhs at one point.  A violation larger than the working precision can
    explain refutes; equality within the required digits satisfies <= but not <; in between
    is undecided."""
    margin = (rhs - lhs) if relation in ("<=", "<") else (lhs - rhs)
    tolerance = scale * mpmath.mpf(10) ** -settings.digits
    if margin > tolerance or (margin >= -tolerance and relation in ("<=", ">=")):
        return Verdict(PASS)
    if margin < -scale * mpmath.mpf(10) ** -DIFFERENT_BELOW or relation in ("<", ">"):
        values = f"{mpmath.nstr(lhs, 20)} {SYMBOLS[relation]} {mpmath.nstr(rhs, 20)} is false"
        return Verdict(FAIL, f"at {_format_point(where)}: {values}",
                       counterexample={**where, "lhs": mpmath.nstr(lhs, 25),
                                       "rhs": mpmath.nstr(rhs, 25)})
    return Verdict(UNDECIDED, f"at {_format_point(where)} the sides differ by "
                              f"{mpmath.nstr(margin, 5)}, too little to tell at this precision")


def arbitrary_values(exprs: list[Expr]) -> dict:
    """Values for the symbols that neither the model nor the indices fix (a shift c in
    softmax(z + c) = softmax(z)): the statement is about every value, so any seeded value will
    do, respecting the symbol's assumptions."""
    entries = {x for e in exprs for x in e.atoms(Indexed)}
    labels = {x.base.label for x in entries} | {i for x in entries for i in x.indices}
    free = sorted({x for e in exprs for x in e.free_symbols
                   if type(x) is sp.Symbol and x not in labels}, key=str)
    rng = random.Random(20261129)
    return {x: random_value(x, rng) for x in free}


def _integrated_pair(sides, model, substitution, point, dim):
    """Both sides with every E[.] integrated; scale: the size of the terms involved."""
    evaluation = _Evaluation(model, substitution, mpmath.mp.dps)
    lhs, rhs = (evaluation.value(side) for side in sides)
    yield lhs, rhs, max(evaluation.scale, abs(lhs), abs(rhs)), {}


POINTWISE_DRAWS = 3
POINTWISE_SCALES = (8, mpmath.mpf(1) / 8)
# Quadrature here is exact, so two sides that agree to fewer than this many digits at 45-digit
# working precision differ; between this and the required digits the check is undecided.
DIFFERENT_BELOW = 10


def _pointwise_pairs(sides, model, substitution, point, dim):
    """Both sides at coordinates drawn from the model (seeded), also stretched and shrunk (for a
    softmax: near one-hot and near uniform) and at a tie; derivatives by mpmath's numerical
    differentiation, not SymPy's; agreement relative to 1 + the size of the values."""
    rng = np.random.default_rng(2026)
    coordinates = random_coordinates(sides[0]) | random_coordinates(sides[1])
    draws = []
    for _ in range(POINTWISE_DRAWS):
        draw = model.sample(rng, 1, dim, point)
        draws.append({c: mpmath.mpf(float(draw[c.base][0, int(c.indices[0]) - 1]))
                      for c in coordinates})
    stretched = [{c: v * scale for c, v in draws[0].items()} for scale in POINTWISE_SCALES]
    tie = {c: mpmath.mpf(1) / 3 for c in coordinates}
    for values in draws + stretched + [tie]:
        lhs, rhs = (pointwise_value(side, values) for side in sides)
        yield lhs, rhs, 1 + max(abs(lhs), abs(rhs)), {str(c): mpmath.nstr(v, 12)
                                                      for c, v in values.items()}


def _numeric_counterexample(lhs, rhs, digits: float, where: dict) -> Verdict:
    values = f"{mpmath.nstr(lhs, 20)} versus {mpmath.nstr(rhs, 20)}"
    return Verdict(FAIL, f"sides differ at {_format_point(where)}: {values}", digits=digits,
                   counterexample={**where, "lhs": mpmath.nstr(lhs, 25),
                                   "rhs": mpmath.nstr(rhs, 25)})


def pointwise_value(expr: Expr, values: dict) -> mpmath.mpf:
    """The value of an expression in the coordinates at ``values``, each derivative taken by
    mpmath.diff at the working precision (which mpmath raises while differentiating)."""
    if isinstance(expr, Derivative):
        ((variable, count),) = expr.variable_count

        def along(t):
            return pointwise_value(expr.expr, {**values, variable: t})
        return mpmath.diff(along, values[variable], int(count))
    if expr.has(Derivative):
        expr = expr.func(*(sp.Float(pointwise_value(a, values), mpmath.mp.dps)
                           if a.has(Derivative) else a for a in expr.args))
    stand_ins = {c: sp.Float(v, mpmath.mp.dps) for c, v in values.items()}
    return mpmath.mpf(sp.N(expr.xreplace(stand_ins), mpmath.mp.dps))


def _format_point(where: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in where.items())


__all__ = ["PASS", "FAIL", "UNDECIDED", "Verdict", "combine", "rule_check", "exact_check",
           "numeric_check", "NumericSettings", "matching_digits"]
