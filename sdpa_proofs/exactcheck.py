"""The exact check: an exact moment engine gives both sides of a step closed forms for
symbolic d, in every case of coinciding free indices, and they must agree.  Identities in the
coordinates are compared after SymPy's own calculus (not the rule check's rules); inequalities
are searched for a counterexample in exact arithmetic, which refutes but does not prove."""

from __future__ import annotations

import random

import mpmath
import sympy as sp
from sympy import Expr, Indexed

from .algebra import (
    ENGINE_ATOMS,
    canonical,
    differs_somewhere,
    may_have_no_value,
    readable,
    sign_at,
    simplifies_to_zero,
    unshared_pole_for_any_values,
    without_numbers,
)
from .calculus import calculus_normal_form
from .concrete import (
    arbitrary_values,
    concrete_index_values,
    concretise,
    expand_sums,
    format_point,
    from_least,
    is_pointwise,
    least_dimension,
)
from .domains import divisors, nonzero_conditions
from .errors import UnsupportedExpression
from .expressions import (
    SUMS,
    E,
    MaxOver,
    index_symbols,
    random_coordinates,
    symmetric_order,
)
from .indexing import expand_terms
from .limits import Lim, outside_the_law, sample_means
from .models import Model
from .moments import ExactEvaluator, exact_cases
from .plainstep import check_plain
from .realnumbers import (
    NoEnclosure,
    approximation,
    certainly_nonzero,
    certainly_positive,
    put_in,
    written_with,
)
from .relations import relation_of, upward
from .supports import exact_points
from .text import show
from .verdicts import FAIL, PASS, UNDECIDED, Verdict


def exact_check(before: Expr, after: Expr, model: Model,
                distinct: frozenset = frozenset(), relation: str = "=") -> Verdict:
    """Closed forms of both sides for symbolic d, in every case of coinciding free indices."""
    relation = relation_of(relation)  # "==" is =, not a bound
    return check_plain(lambda b, a, plain_model, numbers: _exact_check(
        b, a, plain_model, distinct, relation, numbers), before, after, model, "exact engine: ",
        lambda *sides: unshared_pole_for_any_values(
            *_moments_in_denominators_evaluated(sides, model)))


def _moments_in_denominators_evaluated(sides: tuple, model: Model) -> list:
    """The sides with each moment, limit and derivative inside a denominator, a factorial, a
    binomial, a root or a logarithm in its closed form under the model, where the engine has
    one, and the rest as written: the guard leaves parts of moments alone, and
    d - 5 E[q_1^2]/sigma_q^2 is d - 5 under independent-normal, which has no inverse at d = 5
    (review round 69), as is d - 5 L/s^2 for the limit L of the mean of z_l^2, and
    d - d(5 q_1)/dq_1.  Built as written, so that nothing cancels what the guard must see:
    (d - 5)(x + 1)/x with x = d - 5 Var(q_1)/sigma_q^2, rebuilt, was d - 4 (review round 73).
    What has no closed form stays, for the guard to take as unknown."""
    evaluator = ExactEvaluator(model)
    closed = {}
    for side in sides:
        for part in sp.preorder_traversal(side):
            if may_have_no_value(part):
                for atom in _engine_atoms(part):
                    if atom not in closed:
                        closed[atom] = _closed_form(evaluator, atom, model, sides)
    known = {atom: value for atom, value in closed.items() if value is not None}
    return [_put_in_if_defined(side, known) for side in sides]


def moment_divisor_conditions(exprs: list[Expr], model: Model) -> list[Expr]:
    """Where the divisors that hold moments are not 0 under the model: each with its moments
    in closed form, read as domains reads a divisor of parameters (Var(q_1) is a^2 where
    q_1 = a u, and a claim dividing by it holds for a != 0; review round 92).  A divisor with
    a moment that has no closed form is left to the checks, which cannot evaluate it either."""
    evaluator = ExactEvaluator(model)
    closed = []
    for divisor in divisors(exprs, moments=True):
        values = {atom: _closed_form(evaluator, atom, model, (divisor,))
                  for atom in _engine_atoms(divisor)}
        if all(value is not None for value in values.values()):
            closed.append(_put_in_if_defined(divisor, values))
    return nonzero_conditions(closed)


def _engine_atoms(part: Expr) -> list:
    """The moments, limits and derivatives in part: what the engine works out to a value."""
    return [node for node in sp.preorder_traversal(part) if isinstance(node, ENGINE_ATOMS)]


def _put_in_if_defined(side: Expr, values: dict) -> Expr:
    """side with the values put in as written, or side as it was where SymPy cannot build the
    result: Max(0, 1/E[z_1]) with E[z_1] = 0 raises (the other checks say why it has no
    value)."""
    try:
        return written_with(side, values)
    except (ValueError, TypeError, ZeroDivisionError):
        return side


def _closed_form(evaluator: ExactEvaluator, atom: Expr, model: Model, sides: tuple) -> Expr | None:
    """The engine's closed form of a moment, a limit or a derivative, or None where it has
    none, or where it names two indices, whose value then depends on whether they coincide:
    E[q_i q_1] is 0 only where i is not 1 (review round 75)."""
    if len(index_symbols(atom)) > 1:
        return None
    try:
        if isinstance(atom, Lim):
            value = _limits_evaluated(atom, model)
        elif isinstance(atom, sp.Derivative):
            value = calculus_normal_form(atom, model.dimension, sides)
        else:
            value = evaluator.value(atom)
    except Exception:  # noqa: BLE001 - no closed form is only a refinement not made
        return None
    return None if value.has(*ENGINE_ATOMS) else value


def _exact_check(before: Expr, after: Expr, model: Model, distinct: frozenset,
                 relation: str, numbers: dict) -> Verdict:
    try:
        before, after = (_limits_evaluated(x, model) for x in (before, after))
    except UnsupportedExpression as error:
        return Verdict(UNDECIDED, f"exact engine: {error}")
    if relation != "=":
        return _exact_inequality(before, after, model, distinct, relation, numbers)
    if is_pointwise(before, after):
        return _pointwise_exact(before, after, model, distinct, numbers)
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
            verdict = _compare_sums(lhs, rhs, model, where, numbers)
            if verdict.status != PASS:
                return verdict
            continue
        (plain_lhs, plain_rhs), known = without_numbers(lhs, rhs, known=numbers)
        difference = sp.expand(plain_lhs - plain_rhs)
        if difference == 0 or simplifies_to_zero(difference):
            continue
        if differs_somewhere(difference, probes=5, numbers=known, distinct=distinct):
            return Verdict(FAIL, f"exact values differ{where}: {show(lhs)} versus {show(rhs)}",
                           counterexample={"exact": True, "case": where.strip(" ,"),
                                           "lhs": show(lhs), "rhs": show(rhs)})
        return Verdict(UNDECIDED, f"could not show {show(lhs)} = {show(rhs)}{where}")


def _limits_evaluated(expr: Expr, model: Model) -> Expr:
    """Each Lim(X_n, n) replaced by its almost-sure limit under the model (the law of large
    numbers): the expectations of the summands in closed form from the moment engine, the
    conditions checked on those closed forms; UnsupportedExpression where one is not met."""
    for limit in [x for x in sp.preorder_traversal(expr) if isinstance(x, Lim)]:
        means = sample_means(limit)
        why = outside_the_law(limit, means, model)
        if why:
            raise UnsupportedExpression(why)
        evaluator = ExactEvaluator(model)
        values = [evaluator.value(E(f)) for f in means.summands]
        if any(v.has(sp.oo, -sp.oo, sp.zoo, sp.nan) for v in values):
            raise UnsupportedExpression(f"a summand of {show(limit)} has no finite mean")
        at_limit = dict(zip(means.means, values))
        for kind, condition in means.conditions():
            value = condition.xreplace(at_limit)
            if not (certainly_nonzero(value) if kind == "nonzero" else certainly_positive(value)):
                raise UnsupportedExpression(f"{show(value)} is not known to be {kind} at the "
                                            f"limit point of {show(limit)}")
        expr = expr.xreplace({limit: means.limit(values)})
    return expr


def _pointwise_exact(before: Expr, after: Expr, model: Model, distinct: frozenset,
                     numbers: dict) -> Verdict:
    """Differentiate (SymPy) and sift the sums of Kronecker deltas, then compare normal forms for
    symbolic dimension; refute with exact values at concrete coordinates (``numbers``: the
    unknowns that stand for numbers, with their values)."""
    plain, numbers = without_numbers(before, after, known=numbers)
    forms = [canonical(calculus_normal_form(x, model.dimension, plain)) for x in plain]
    if sp.expand(forms[0] - forms[1]) == 0 or simplifies_to_zero(forms[0] - forms[1]):
        return Verdict(PASS)
    maxima = forms[0].has(MaxOver) or forms[1].has(MaxOver)
    for dim in from_least((2, 3), least_dimension((before, after))):
        for indices in concrete_index_values([before, after], distinct, dim,
                                             model.dimension):
            sides = [concretise(f, {model.dimension: sp.Integer(dim)}, indices).doit()
                     for f in forms]
            coordinates = sorted(random_coordinates(sides[0]) | random_coordinates(sides[1]),
                                 key=sp.default_sort_key)
            for point in model.parameter_points:
                at_point = [put_in(side, point) for side in sides]
                points = _exact_points(model, coordinates, dim, point, numbers)
                for draw, values in enumerate(points):
                    values = {**values, **arbitrary_values(at_point, draw % ARBITRARY_DRAWS),
                              **numbers}
                    try:
                        sign = sign_at(at_point[0] - at_point[1], values)
                    except (ValueError, TypeError) as error:  # SymPy's Max of a non-real
                        at = ", ".join(f"{show(x)} = {show(values[x])}" for x in coordinates
                                       if x in values)
                        return Verdict(UNDECIDED, f"could not evaluate {show(before)} and "
                                                  f"{show(after)} at {at or 'a point'}: a "
                                                  "side may have no real value there (log 0, "
                                                  f"1/0), as SymPy says: {error}")
                    if sign:
                        where = {str(model.dimension): dim,
                                 **{str(k): str(v) for k, v in point.items()},
                                 **{str(k): int(v) for k, v in indices.items()},
                                 **{str(c): str(v) for c, v in values.items() if c not in numbers}}
                        return Verdict(FAIL, f"the sides differ at {format_point(where)}",
                                       counterexample={"exact": True, **where})
    if maxima:
        # a maximum over a symbolic range has no normal form here: refute only
        return Verdict(PASS, "no counterexample at the exact points tried (dimensions 2, 3: "
                             "ties, corners, random); a maximum "
                             "over a symbolic range has no exact normal form, so for every "
                             "dimension the rule check is the proof", conclusive=False)
    return Verdict(UNDECIDED, f"could not show {show(forms[0])} = {show(forms[1])}")


def _exact_inequality(before: Expr, after: Expr, model: Model, distinct: frozenset,
                      relation: str, numbers: dict) -> Verdict:
    """A search for a counterexample among the exact forms (SymPy's calculus for identities in
    the coordinates, closed moments for symbolic d) at concrete dimensions.  It refutes but
    proves nothing: the proof for every dimension is the rule check's, and the reason says so."""
    if is_pointwise(before, after):
        cases = [({}, *(calculus_normal_form(x, model.dimension, (before, after))
                        for x in (before, after)))]
    else:
        try:
            cases = list(exact_cases(before, after, model, distinct))
        except UnsupportedExpression as error:
            return Verdict(UNDECIDED, f"exact engine: {error}")
    return _search_counterexample(cases, model, distinct, relation, numbers)


EXACT_DIMENSIONS = (2, 3, 4)
ARBITRARY_DRAWS = 3  # exact points per case otherwise


def _search_counterexample(cases: list, model: Model, distinct: frozenset,
                           relation: str, numbers: dict) -> Verdict:
    """Evaluate the exact forms at concrete dimensions, with coordinates z = log r for rational
    r (so e^z is exact) at ties, near one-hot points and random points, parameters at the
    model's points and the unknowns that stand for numbers at their numbers; any point where
    the relation fails refutes the step."""
    want = upward(relation)
    tried = 0
    # z_5 exists only from n = 5 on: the dimensions start where every named coordinate does
    dimensions = from_least(EXACT_DIMENSIONS, least_dimension(
        [side for _, lhs, rhs in cases for side in (lhs, rhs)]))
    for dim in dimensions:
        for _, lhs, rhs in cases:
            for indices in concrete_index_values([lhs, rhs], distinct, dim, model.dimension):
                for point in model.parameter_points:
                    substitution = model.concrete(point, dim)
                    difference = want * (concretise(rhs, substitution, indices)
                                         - concretise(lhs, substitution, indices))
                    coordinates = sorted(random_coordinates(difference),
                                         key=sp.default_sort_key)
                    for values in _exact_points(model, coordinates, dim, point, numbers):
                        # a free scale c takes values too, another at each point tried
                        values = {**values, **arbitrary_values([difference],
                                                               tried % ARBITRARY_DRAWS),
                                  **numbers}
                        try:
                            sign = sign_at(difference, values)
                        except (ValueError, TypeError):  # SymPy's Max of a non-real value
                            return Verdict(UNDECIDED, f"could not evaluate {show(difference)}")
                        tried += 1
                        if sign is not None and (sign < 0 or (relation in ("<", ">")
                                                              and sign == 0)):
                            where = {str(model.dimension): dim,
                                     **{str(k): str(v) for k, v in point.items()},
                                     **{str(k): int(v) for k, v in indices.items()},
                                     **{str(c): str(v) for c, v in values.items()
                                        if c not in numbers}}
                            # the numbers as they stand
                            value = _shown(written_with(difference, values))
                            return Verdict(FAIL, f"the relation fails at {format_point(where)}: "
                                                 f"the sides differ by {value}",
                                           counterexample={"exact": True, **where})
    return Verdict(PASS, f"no counterexample at {tried} exact points "
                         f"(dimensions {', '.join(map(str, dimensions))}: ties, corners, "
                         "random); for every dimension the rule check is the proof",
                   conclusive=False)


def _exact_points(model: Model, coordinates: list, dim: int, point: dict, numbers: dict):
    """``supports.exact_points``, the unknowns that stand for the model's numbers (its corners
    are built from its loadings) put back: sqrt(3) sqrt(3)/3 is 1 again, and a tie a tie (the
    model's numbers passed misjudged_by_sympy)."""
    for values in exact_points(model, coordinates, dim, point):
        yield {c: v.xreplace(numbers) for c, v in values.items()}


def _shown(number: Expr) -> str:
    """A number to 12 digits, proven where realnumbers can (SymPy's evalf shows
    log(cos(10^-40 log(3/2))) as 0; it is -8.2 10^-82)."""
    try:
        return mpmath.nstr(approximation(number, 64), 12)
    except NoEnclosure:
        return str(sp.N(number, 12))


def _compare_sums(lhs: Expr, rhs: Expr, model: Model, where: str, numbers: dict) -> Verdict:
    """Closed forms that are sums of matrix entries: equal when their normal forms agree
    (products of sums nested, i != j sums as full minus diagonal, bound indices and symmetric
    entries in canonical order); unequal when they differ at a concrete d for random entries.
    Numbers take part as unknowns of their proven signs (see algebra.without_numbers)."""
    shown = lhs, rhs
    (lhs, rhs), numbers = without_numbers(lhs, rhs, known=numbers)
    try:
        normal = [_sum_normal_form(side, model.dimension) for side in (lhs, rhs)]
    except UnsupportedExpression:
        normal = None
    if normal is not None and sp.expand(normal[0] - normal[1]) == 0:
        return Verdict(PASS)
    rng = random.Random(20261129)
    for dim in (3, 4):
        concrete = [expand_sums(put_in(side, {model.dimension: sp.Integer(dim)}))
                    for side in (lhs, rhs)]
        difference = symmetric_order(sp.expand(concrete[0] - concrete[1]))
        entries = {e: sp.Rational(rng.randint(-40, 40), rng.randint(3, 17))
                   for e in difference.atoms(Indexed)}
        if differs_somewhere(difference.xreplace(entries), probes=2, numbers=numbers):
            lhs_text, rhs_text = (show(readable(side)) for side in shown)
            return Verdict(FAIL, f"exact values differ{where}: {lhs_text} versus {rhs_text}",
                           counterexample={"exact": True, str(model.dimension): dim,
                                           "lhs": lhs_text, "rhs": rhs_text})
    return Verdict(UNDECIDED, f"could not show {show(readable(shown[0]))} = "
                              f"{show(readable(shown[1]))}{where}")


def _sum_normal_form(expr: Expr, dimension: Expr) -> Expr:
    """Sums of matrix entries as one sum over index tuples per term (products of sums multiplied
    out), an i != j sum as the full sum minus its diagonal, in algebra's canonical form."""
    total = sp.S.Zero
    for term in expand_terms(expr, dimension, lambda e: isinstance(e, Indexed)):
        body = term.coeff * sp.Mul(*term.factors)
        if len(term.distinct) > 1:
            raise UnsupportedExpression("more than one i != j constraint in one term")
        limits = [(index, 1, dimension) for index in term.bound]
        full = sp.Sum(body, *limits) if limits else body
        for a, b in (tuple(pair) for pair in term.distinct):
            rest = [limit for limit in limits if limit[0] != b]
            diagonal = body.xreplace({b: a})
            full -= sp.Sum(diagonal, *rest) if rest else diagonal
        total += full
    return canonical(total)


def _describe_case(case: dict) -> str:
    if len(case) < 2:
        return ""
    groups: dict = {}
    for index, block in case.items():
        groups.setdefault(block, []).append(str(index))
    equal = [" = ".join(sorted(g)) for g in groups.values() if len(g) > 1]
    if equal:
        return " when " + ", ".join(equal)
    free = [index for index in case if not sp.sympify(index).is_Integer]
    # q_1 and q_2 are two coordinates, not free indices (review round 89)
    return " when the free indices are distinct" if len(free) > 1 else ""
