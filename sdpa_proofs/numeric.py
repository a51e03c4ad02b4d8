"""The numeric check: both sides of a step, as written, evaluated at concrete d and parameter
values by quadrature against the model's density (expectations) or at coordinates drawn from the
model (identities in the coordinates), to high precision with mpmath."""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp
from sympy import Derivative, Expr, Indexed, Symbol

from .algebra import term_size
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
from .errors import UnsupportedExpression
from .expressions import MOMENT_FUNCTIONS, Cov, E, Var, pole, random_coordinates
from .limits import Lim, outside_the_law, sample_means
from .models import Model
from .realnumbers import put_in
from .relations import SYMBOLS, relation_of
from .supports import (
    Draws,
    Scaled,
    Tie,
    bounded_latents,
    built_from_latents,
    exact_latent,
    exact_points,
)
from .text import show
from .verdicts import FAIL, PASS, UNDECIDED, Verdict


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
    stand_ins: dict = field(default_factory=dict)  # nested moment -> its unknown
    unknowns: dict = field(default_factory=dict)  # unknown -> (value, size)

    def value(self, expr: Expr) -> mpmath.mpf:
        """Numerical value of an expression whose sums are already expanded."""
        return self.value_and_size(expr)[0]

    def value_and_size(self, expr: Expr) -> tuple[mpmath.mpf, mpmath.mpf]:
        """The value, and the size of the terms it is made of (see ``term_size``), each moment
        counting with the size of the terms its integral added up."""
        x = expr.xreplace({atom: self._unknown(atom) for atom in _moment_atoms(expr)})
        try:
            concrete = x.xreplace(self._numbers(x))
        except (ValueError, TypeError) as error:  # Max(0, 1/E[q_1]) is Max(0, zoo)
            raise UnsupportedExpression(f"{show(expr)} has no value with its moments put in: "
                                        f"{error}") from error
        return self._number(concrete, expr), self._size_at(x, {})

    def _number(self, concrete: Expr, expr: Expr) -> mpmath.mpf:
        result = sp.N(concrete, self.dps)
        if not result.is_number or not result.is_real:
            raise UnsupportedExpression(f"{show(expr)} does not evaluate to a real number")
        try:
            return mpmath.mpf(result)
        except (TypeError, ValueError):  # a number SymPy could not evaluate, as a sum it kept
            raise UnsupportedExpression(f"{show(expr)} does not evaluate to a number "
                                        "here") from None

    def moment(self, atom: Expr) -> mpmath.mpf:
        """E, Var, sd and Cov from their definitions, each E by integration."""
        if isinstance(atom, E):
            return self.expectation(atom.args[0])
        outer = self.scale
        centred = [x - sp.Float(self.expectation(x), self.dps) for x in atom.args]
        # a mean off by delta moves E[(X - m)^2] by delta^2 alone: the terms that count are
        # those of the centred integrand, not the mean's (log(1 + 10^-50 q^2) holds a 1)
        self.scale = outer
        if isinstance(atom, Cov):
            return self.expectation(centred[0] * centred[1])
        variance = self.expectation(centred[0] ** 2)
        if isinstance(atom, Var):
            return variance
        # the root of a variance: its error is dV / (2 sd), not a share of sd's own size; a
        # variance within reach of the noise counts as 0, its root then being off by up to
        # the noise's root, sqrt(size 10^-dps): that is its size in units of 10^-dps, so that
        # a side beside a nonzero one is evaluated again with the digits to see sd squared
        noise = self.scale * mpmath.mpf(10) ** (NOISE_DIGITS - self.dps)
        if variance <= noise:
            self.scale = mpmath.sqrt(noise) * mpmath.mpf(10) ** self.dps
            return mpmath.mpf(0)
        root = mpmath.sqrt(variance)
        self.scale = root + self.scale / (2 * root)
        return root

    def expectation(self, x: Expr) -> mpmath.mpf:
        """E[x] by quadrature against the model's density, exact for polynomials."""
        x = x.xreplace({atom: self._unknown(atom) for atom in _moment_atoms(x)})
        numbers = self._numbers(x)
        variables = sorted(random_coordinates(x), key=sp.default_sort_key)
        if not variables:
            value = mpmath.mpf(sp.N(x.xreplace(numbers), self.dps))
            # a constant term is a term involved, a nested moment in it with its own size
            self.scale = max(self.scale, abs(value), self._size_at(x, {}) if numbers else 0)
            return value
        layout = None if numbers else self.model.integration_key(variables)
        if layout is None:
            return self._expectation_of(x, variables, numbers)
        # written-out sums ask for E[q_1^2 k_1^2], E[q_2^2 k_2^2], ... at every index, point
        # and precision: one integral serves every x with the same layout, which integrating
        # again would reproduce step for step (integration_key)
        key = (id(self.model), frozenset(self.point.items()), self.dps, mpmath.mp.prec, layout,
               x.xreplace(dict(zip(variables, _positions(len(variables))))))

        def integrated() -> tuple:
            outer, self.scale = self.scale, mpmath.mpf(0)
            try:  # the scale its terms reach, kept with it; the entry holds the model, so
                # that no other model can be given its id meanwhile
                return self.model, self._expectation_of(x, variables, numbers), self.scale
            finally:
                self.scale = max(outer, self.scale)
        _, value, scale = _remembered(_EXPECTATIONS, key, integrated)
        self.scale = max(self.scale, scale)
        return value

    def _expectation_of(self, x: Expr, variables: list, numbers: dict) -> mpmath.mpf:
        """E[x] for x in the coordinates ``variables`` and the unknowns ``numbers``."""
        if x.has(Derivative, sp.Subs):
            raise UnsupportedExpression(f"E[{show(x)}]: a derivative inside an expectation is not "
                                        "integrated here")
        if x.has(*NOT_SMOOTH):
            raise UnsupportedExpression(
                f"E[{x}]: not smooth in the coordinates; quadrature rules that agree prove "
                "nothing about a jump or a kink between their nodes")
        _no_pole(x)
        terms = sp.Add.make_args(sp.expand(x))
        if 1 < len(terms) <= MAX_TERMS:  # term by term: each over the coordinates it uses
            values = [self.expectation(term) for term in terms]
            self.scale = max(self.scale, *(abs(v) for v in values))
            return mpmath.fsum(values)
        if len(terms) == 1:  # expanded, what cancels inside it has cancelled exactly
            x = terms[0]
        monomial = _monomial(x, variables)
        if monomial:
            f, powers = monomial
            degrees = {v: powers.get(v, 0) for v in variables}
        else:
            degrees = {v: _degree(x, v) for v in variables}
        polynomial = all(deg is not None for deg in degrees.values())
        if not monomial and polynomial:
            coefficient, rest = x.as_independent(*variables, as_Add=False)
            scaled = _monomial(rest, variables)
            if scaled:  # c m, c a number that is no rational
                return self._scaled_monomial(coefficient, scaled[0], variables, degrees)
        if not monomial:
            f = sp.lambdify(variables, x.xreplace(numbers), modules="mpmath")
        # E|x| measures the rounding of a monomial; anything else may round inside itself
        # (sin(q + 10^50), log(1 + q^2 10^-50), (s + c)^10 - c^10 written as it stands)
        inside = 0 if monomial else _probed_size(x, variables, self._size_at)
        if not polynomial:
            value, magnitude = self._converged(f, x, variables, inside)
        else:
            value, magnitude = self.model.integrate(f, variables, degrees, self.point, self.dps)
        self.scale = max(self.scale, magnitude, inside)
        return value

    def _scaled_monomial(self, coefficient: Expr, monomial, variables: list,
                         degrees: dict) -> mpmath.mpf:
        """E[c m] = c E[m] for a number c and a monomial m (as a function of the variables);
        its terms are of size size(c) E|m|.  Sized at a few probes instead, the rounding
        inside c (tanh(e^(10^-47) - 1), 0 at 45 digits) went unseen where m's mass lies
        beyond them (q^200 under Laplace, at |q| near 60)."""
        value = self._number(coefficient.xreplace(self._numbers(coefficient)), coefficient)
        moment, absolute = self.model.integrate(monomial, variables, degrees, self.point,
                                                self.dps)
        self.scale = max(self.scale, self._size_at(coefficient, {}) * absolute,
                         abs(value) * absolute)
        return value * moment

    def _unknown(self, atom: Expr) -> Expr:
        """A nested moment as an unknown of its value and size: it enters an integrand with its
        error, which the rest multiplies (10^50 q^2 E[A], E[A] made of terms of 10^82)."""
        if atom not in self.stand_ins:
            outer, self.scale = self.scale, mpmath.mpf(0)
            value = self.moment(atom)
            self.stand_ins[atom] = unknown = sp.Dummy(real=True)
            self.unknowns[unknown] = value, max(self.scale, abs(value))
            self.scale = max(outer, self.scale)
        return self.stand_ins[atom]

    def _numbers(self, x: Expr) -> dict:
        """The values of the unknowns x holds, as numbers to put in."""
        return {u: sp.Float(v, self.dps) for u, (v, _) in self.unknowns.items() if x.has(u)}

    def _size_at(self, x: Expr, coordinates: dict) -> mpmath.mpf:
        """``pointwise_size`` of x at the coordinates, its unknowns at their values and sizes."""
        values = {u: v for u, (v, _) in self.unknowns.items()}
        sizes = {u: size for u, (_, size) in self.unknowns.items()}
        return pointwise_size(x, {**values, **coordinates}, sizes.get)

    def _converged(self, f, x: Expr, variables: list, inside: mpmath.mpf) -> tuple:
        """E[f] for f not a polynomial (e^z, z e^z, ...): the model's Gauss rules with twice
        the points each time until two results agree to all but the guard digits of E|f|,
        or of the terms f is made of (``inside``) where rounding within f reaches further;
        no agreement within the grid limit is no value (the check is then undecided)."""
        wanted = mpmath.mpf(10) ** -(self.dps - CONVERGED_GUARD)
        previous = None
        for degree in CONVERGENCE_DEGREES:
            if (degree // 2 + 1) ** len(variables) > MAX_GRID:
                break
            try:
                value, magnitude = self.model.integrate(
                    f, variables, dict.fromkeys(variables, degree), self.point, self.dps)
            except ValueError as error:  # the model has no rule for this integrand
                raise UnsupportedExpression(f"E[{show(x)}]: {error}") from error
            # E|f| must settle too, if only roughly (|f| has kinks where f changes sign):
            # symmetric nodes give E[1/q] = 0 on every rule, while E|1/q|, infinite, grows
            # with each
            if previous is not None \
                    and abs(value - previous[0]) <= wanted * max(magnitude, inside) \
                    and abs(magnitude - previous[1]) <= MAGNITUDE_SETTLED * magnitude:
                if not magnitude:  # rounding may have taken all of it: weigh its terms
                    magnitude = self._sized_at_nodes(x, variables)
                self._tails_die_out(x, variables, wanted * max(magnitude, inside))
                return value, magnitude
            previous = value, magnitude
        raise UnsupportedExpression(f"E[{show(x)}]: not a polynomial in the coordinates, and Gauss "
                                    f"quadrature did not converge within {MAX_GRID} points")

    def _sized_at_nodes(self, x: Expr, variables: list) -> mpmath.mpf:
        """E[size of x's terms] by the first rule, for an integrand that is 0 at every node
        though not 0 as written (10^50 e^(-(q + 5/2)^4) log(1 + (1 + q^2) 10^-50)): the
        probes may lie where its terms are small, the nodes cannot, and the size makes the
        check evaluate it again with the digits to see it.  The first rule has fewer nodes
        than the second, which fitted within MAX_GRID."""
        degree = CONVERGENCE_DEGREES[0]
        sized, _ = self.model.integrate(
            lambda *values: self._size_at(x, dict(zip(variables, values, strict=True))),
            variables, dict.fromkeys(variables, degree), self.point, self.dps)
        return sized

    def _tails_die_out(self, x: Expr, variables: list, limit: mpmath.mpf) -> None:
        """Rules that agree prove nothing about mass beyond their nodes: the size of x's terms
        times the density, far out in the tails of the model's law (``tail_points``), must lie
        below ``limit``, what the rules were allowed to disagree by."""
        for log_weight, values in self.model.tail_points(variables, self.point, self.dps):
            at = dict(zip(variables, values, strict=True))
            try:
                size = self._size_at(x, at)
            except (ArithmeticError, ValueError, UnsupportedExpression) as error:
                raise UnsupportedExpression(f"E[{show(x)}]: its terms could not be sized in the "
                                            f"tails of the law ({error})") from error
            if size and mpmath.log(size) + log_weight > mpmath.log(limit):
                where = ", ".join(f"{v} = {mpmath.nstr(value, 5)}" for v, value in at.items())
                raise UnsupportedExpression(
                    f"E[{x}]: its terms do not die out in the tails of the law (at {where} "
                    f"they weigh 10^{int(mpmath.log10(size) + log_weight / mpmath.log(10))}, "
                    "beyond every quadrature node): the rules cannot see where its mass lies")


# Integrands on which Gauss rules converge to nothing reliable: two rules can agree while a jump
# or a kink lies between their nodes (an indicator of a thin interval reads as 0).
NOT_SMOOTH = (sp.Piecewise, sp.Heaviside, sp.Abs, sp.Max, sp.Min, sp.sign, sp.floor,
              sp.ceiling)
# A sum of many terms is integrated term by term (a grid over the few latents each term uses,
# rather than one over all of them), up to this many terms.
MAX_TERMS = 5000
CONVERGENCE_DEGREES = (30, 62, 126, 254)  # 16, 32, 64, 128 points per latent
MAX_GRID = 20_000
CONVERGED_GUARD = 10  # digits of the working precision that two quadratures may disagree on


def _limits_as_expectations(expr: Expr, model: Model, settings: NumericSettings) -> Expr:
    """Each Lim(X_n, n) as its almost-sure limit h(E[f_1], ...) (the law of large numbers),
    the expectations left for quadrature; the conditions on h are evaluated by quadrature at
    every parameter point, and one that fails or cannot be told apart from failing leaves the
    check undecided."""
    for limit in [x for x in sp.preorder_traversal(expr) if isinstance(x, Lim)]:
        means = sample_means(limit)
        why = outside_the_law(limit, means, model)
        if why:
            raise UnsupportedExpression(why)
        expectations = dict(zip(means.means, (E(f) for f in means.summands)))
        with mpmath.workdps(settings.dps):
            for point in model.parameter_points:
                substitution = model.concrete(point, 1)
                for kind, condition in means.conditions():
                    value, _ = _integrated(condition.xreplace(expectations), model,
                                           substitution)
                    small = abs(value) <= mpmath.mpf(10) ** -settings.digits
                    if small or (kind == "positive" and value < 0):
                        raise UnsupportedExpression(
                            f"{show(condition.xreplace(expectations))} is {mpmath.nstr(value, 5)}"
                            f" at {format_point(point)}, where the limit needs it {kind}")
        expr = expr.xreplace({limit: means.limit(list(expectations.values()))})
    return expr


def _probed_size(x: Expr, variables: list, size_at) -> mpmath.mpf:
    """The size of the terms x is made of (``size_at(x, coordinates)``), the largest at points
    near 0 and out in the tails, where the nodes of large rules lie: what rounding inside x at
    the nodes scales with.  The points are seeded by x itself, so that x cannot be written to
    vanish at them; by x in its variables' positions, so that the integrands that share one
    integral (``integration_key``: cos(k_2) k_2 and cos(k_3) k_3) are probed alike."""
    positional = x.xreplace({v: sp.Symbol(f"_x{n}") for n, v in enumerate(variables)})
    rng = random.Random(zlib.crc32(sp.srepr(positional).encode()))
    return max(size_at(x, {v: mpmath.mpf(reach * rng.uniform(-1.5, 1.5)) for v in variables})
               for reach in PROBE_REACHES)


def _no_pole(x: Expr) -> None:
    """Symmetric Gauss rules give E[1/q] a value, though it has none: undecided."""
    why = pole(x)
    if why:
        raise UnsupportedExpression(f"E[{show(x)}]: {why}: the expectation may not exist")


PROBE_REACHES = (1, 3, 6)  # coordinates up to 1.5, 4.5 and 9
# E|f| of two rules within 10%: |cos q| moves up to 8% between rules (its kinks), the
# infinite E|1/q| grows by 12-17% a rule under the built-in laws
MAGNITUDE_SETTLED = mpmath.mpf(1) / 10


_EXPECTATIONS: dict = {}  # (model, point, precision, layout, x) -> (model, E[x], its scale)
_POSITIONS: list = []  # stand-ins for the variables of an integrand, by position


def _positions(count: int) -> list:
    while len(_POSITIONS) < count:
        _POSITIONS.append(sp.Dummy(f"x{len(_POSITIONS)}"))
    return _POSITIONS[:count]


def _monomial(x: Expr, variables: list) -> tuple | None:
    """For x = c prod v^p with c rational (what most integrands are once split into terms):
    x as a function of ``variables`` for mpmath, evaluated directly (lambdify's code
    generation costs milliseconds a call), and the powers p; None for anything else."""
    constant, powers = sp.S.One, {}
    for factor in sp.Mul.make_args(x):
        base, exponent = factor.as_base_exp()
        if base in variables and exponent.is_Integer and exponent > 0:
            powers[base] = powers.get(base, 0) + int(exponent)
        elif factor.is_Rational:
            constant *= factor
        else:
            return None
    c = mpmath.mpf(int(constant.p)) / int(constant.q)
    positions = [(variables.index(v), p) for v, p in powers.items()]

    def monomial(*values):
        result = c
        for position, power in positions:
            result *= values[position] ** power
        return result
    return monomial, powers


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


def matching_digits(a: mpmath.mpf, b: mpmath.mpf, dps: int) -> float:
    """Significant digits to which a and b agree.  Both are resolved (see ``_resolved``): a value
    far below the terms it came from was evaluated again with the digits to see it, or found
    to be noise and set to 0, so agreement is measured against the values themselves."""
    difference = abs(a - b)
    if difference == 0:
        return float(dps)
    reference = max(abs(a), abs(b))
    return float(min(dps, max(0, -mpmath.log10(difference / reference))))


def numeric_check(before: Expr, after: Expr, model: Model, settings: NumericSettings,
                  distinct: frozenset = frozenset(), relation: str = "=") -> Verdict:
    """Evaluate both sides as written at d in ``settings.dimensions``, every parameter point and
    every value of the free indices: expectations by exact quadrature against the model's
    density, identities in the coordinates pointwise at coordinates drawn from the model."""
    relation = relation_of(relation)  # "==" is =, not a bound
    before, after = sp.sympify(before), sp.sympify(after)
    try:  # MisjudgedNumber among them: where values put in make numbers SymPy misjudges
        before, after = (_limits_as_expectations(x, model, settings) for x in (before, after))
        with mpmath.workdps(settings.dps):
            return _numeric_check(before, after, model, settings, distinct, relation)
    except UnsupportedExpression as error:
        return Verdict(UNDECIDED, f"numeric: {error}")


def _numeric_check(before: Expr, after: Expr, model: Model, settings: NumericSettings,
                   distinct: frozenset, relation: str) -> Verdict:
    pointwise = is_pointwise(before, after)
    evaluate = _pointwise_pairs if pointwise else _integrated_pair
    dimensions = settings.dimensions + (CORNER_DIMENSIONS if pointwise and bounded_latents(
        model, model.parameter_points[0]) else ())
    lowest = None
    for sides, where, substitution, point, dim in _cases(before, after, model, dimensions,
                                                         distinct):
        pairs = _resolved(evaluate, sides, model, substitution, point, dim)
        for lhs, rhs, _, at in pairs:
            if not (mpmath.isfinite(lhs) and mpmath.isfinite(rhs)):
                return Verdict(UNDECIDED, f"a side is not a finite number at "
                               f"{format_point({**where, **at})}: "
                               f"{mpmath.nstr(lhs, 10)} and {mpmath.nstr(rhs, 10)}")
            if relation != "=":
                verdict = _inequality_at(lhs, rhs, relation, settings,
                                         {**where, **at})
                if not verdict.passed:
                    return verdict
                continue
            digits = matching_digits(lhs, rhs, settings.dps)
            lowest = digits if lowest is None else min(lowest, digits)
            if digits < DIFFERENT_BELOW:
                return _numeric_counterexample(lhs, rhs, digits, {**where, **at})
            if digits < settings.digits:
                return Verdict(UNDECIDED, f"only {digits:.1f} significant digits agree at "
                               f"{format_point({**where, **at})}, {settings.digits} "
                               "required", digits=digits)
    if relation != "=":  # points, not every value: 1 - sum p_i^2 <= 3/4 holds up to n = 4
        return Verdict(PASS, f"holds at every point evaluated (dimensions "
                             f"{', '.join(map(str, dimensions))})", conclusive=False)
    if lowest is None:
        return Verdict(UNDECIDED, "no concrete case to evaluate")
    return Verdict(PASS, digits=lowest)


ARBITRARY_DRAWS = 3  # values tried for each symbol that nothing fixes (a shift c)


def _cases(before: Expr, after: Expr, model: Model, dimensions: tuple, distinct: frozenset):
    """(both sides made concrete, where, substitution, point, d) for every dimension, parameter
    point, value of the free indices and draw of values for the symbols nothing fixes."""
    # a claim that names q_2 is about the dimensions that have a q_2, as the exact engine reads
    # it (at d = 1, E[S q_2 k_2] would take q_2 for a coordinate beyond S): the dimensions
    # are moved up to start at the largest index named
    for dim in from_least(dimensions, least_dimension((before, after))):
        for indices in concrete_index_values([before, after], distinct, dim,
                                             model.dimension):
            # the sums written out once per dimension, then each parameter point put in
            written = [_written_out(x, model.dimension, dim, tuple(indices.items()))
                       for x in (before, after)]
            for point in model.parameter_points:
                substitution = model.concrete(point, dim)
                concrete = [_at_point(x, substitution) for x in written]
                for draw in range(ARBITRARY_DRAWS):
                    arbitrary = arbitrary_values(concrete, draw)
                    if draw and not arbitrary:
                        break
                    where = {str(model.dimension): dim,
                             **{str(k): str(v) for k, v in point.items()},
                             **{str(k): int(v) for k, v in indices.items()},
                             **{str(k): str(v) for k, v in arbitrary.items()}}
                    # a sum may run up to a symbol that only now has its value
                    yield ([expand_sums(put_in(side, arbitrary)) if arbitrary else side
                            for side in concrete], where, substitution, point, dim)


_AT_POINT: dict = {}  # (written side, substitution) -> the side with the values put in


def _at_point(written: Expr, substitution: dict) -> Expr:
    """``put_in(written, substitution)``, remembered: a chain's right side is the next step's
    left side, put at the same points (what put_in refuses is not remembered: asked again, it
    is tried again)."""
    return _remembered(_AT_POINT, (written, frozenset(substitution.items())),
                       lambda: put_in(written, substitution))


MAX_EXTRA_DIGITS = 600  # the most the precision is raised to see through cancelling terms


def _resolved(evaluate, sides, model, substitution, point, dim) -> list:
    """The pairs of values, evaluated again with more digits while they lie far below the
    terms involved (terms of size 10^60 that cancel, or 10^-40 z^2 beside terms of size 1):
    the working precision's noise must stay below 10^-dps of the values, so that no difference
    can hide under the terms.  A value still within reach of the raised precision's noise was
    that noise (a true 0 computed from terms that cancel): it is 0, but only once evaluated
    with twice the digits (and those of its terms' size), so that no value is lost that is
    more than 10^-(2 dps - NOISE_DIGITS) of its terms."""
    base = mpmath.mp.dps
    pairs = list(evaluate(sides, model, substitution, point, dim))
    extras = [0] * len(pairs)  # the digits each pair was last evaluated with beyond base
    for _ in range(4):
        needed = [max(_hidden_digits(value, size, base)
                      for value, size in zip(pair[:2], pair[2], strict=True))
                  for pair in pairs]
        pending = [n for n, digits in enumerate(needed) if digits > extras[n]]
        if not pending:
            return pairs
        extra = max(needed[n] for n in pending) + 2
        if extra > MAX_EXTRA_DIGITS:
            raise UnsupportedExpression(f"the values lie 10^{extra - 2} below the terms "
                                        f"involved; seeing them needs more than "
                                        f"{MAX_EXTRA_DIGITS} extra digits")
        with mpmath.workdps(base + extra):
            raised = list(evaluate(sides, model, substitution, point, dim, only=set(pending)))
        for n, new in zip(pending, raised, strict=True):
            pairs[n] = (*(_unless_noise(new[k], new[2][k], base + extra) for k in (0, 1)),
                        *new[2:])
            extras[n] = extra
    raise UnsupportedExpression("the values did not settle as the precision was raised")


def _hidden_digits(value: mpmath.mpf, size: mpmath.mpf, dps: int) -> int:
    """How many more digits it takes to see a side's value beside the terms it came from, of
    size ``size``: the orders of magnitude between them, and for a value that is 0 ``dps``
    more than the terms' own (a 0 computed from terms of 10^60 at 45 digits says nothing, nor
    does one found after a raise that a wrong first value made too small)."""
    value = abs(value)
    if size == 0 or size <= value:
        return 0
    if value == 0:
        return dps + max(0, int(mpmath.ceil(mpmath.log10(size))))
    return int(mpmath.floor(mpmath.log10(size / value)))


def _unless_noise(value: mpmath.mpf, scale: mpmath.mpf, dps: int) -> mpmath.mpf:
    """``value``, evaluated at ``dps`` digits from terms of size ``scale``; 0 if it lies within
    NOISE_DIGITS of that precision's rounding noise (the digits were raised to see values far
    larger than that, so a value still down there is the noise of a true 0)."""
    return mpmath.mpf(0) if abs(value) <= scale * mpmath.mpf(10) ** (NOISE_DIGITS - dps) \
        else value


NOISE_DIGITS = 10  # how far above 10^-dps of the terms rounding can reach: many terms, powers


def _inequality_at(lhs, rhs, relation: str, settings: NumericSettings,
                   where: dict) -> Verdict:
    """lhs relation rhs at one point.  A violation larger than the working precision can
    explain refutes; equality within the required digits satisfies <= but not <; in between
    is undecided."""
    margin = (rhs - lhs) if relation in ("<=", "<") else (lhs - rhs)
    size = max(abs(lhs), abs(rhs))  # resolved values (see _resolved)
    # never wider than what an equality is failed at (DIFFERENT_BELOW digits): at --digits 2
    # a violation of 10^-3 passed a bound that the same gap fails as an equation (round 54)
    tolerance = size * mpmath.mpf(10) ** -max(settings.digits, DIFFERENT_BELOW)
    if margin > tolerance or (margin >= -tolerance and relation in ("<=", ">=")):
        return Verdict(PASS)
    if margin < -size * mpmath.mpf(10) ** -DIFFERENT_BELOW or relation in ("<", ">"):
        values = f"{mpmath.nstr(lhs, 20)} {SYMBOLS[relation]} {mpmath.nstr(rhs, 20)} is false"
        return Verdict(FAIL, f"at {format_point(where)}: {values}",
                       counterexample={**where, "lhs": mpmath.nstr(lhs, 25),
                                       "rhs": mpmath.nstr(rhs, 25)})
    return Verdict(UNDECIDED, f"at {format_point(where)} the sides differ by "
                              f"{mpmath.nstr(margin, 5)}, too little to tell at this precision")


@lru_cache(maxsize=1024)
def _written_out(expr: Expr, dimension: Symbol, dim: int, indices: tuple) -> Expr:
    """The expression at d = dim with its free indices given, its sums written out: a chain's
    right side is the next step's left side, written out once."""
    return concretise(expr, {dimension: sp.Integer(dim)}, dict(indices))


def _integrated_pair(sides, model, substitution, point, dim, only=None):
    """Both sides with every E[.] integrated, and the sizes of the terms each came from (one
    pair, which ``only`` = {0} asks for again)."""
    (lhs, lhs_size), (rhs, rhs_size) = (_integrated(side, model, substitution)
                                        for side in sides)
    yield lhs, rhs, (max(lhs_size, abs(lhs)), max(rhs_size, abs(rhs))), {}


_VALUES: dict = {}  # (model, parameter values, precision, expression) -> (model, value, size)
_VALUES_KEPT = 4096  # entries a store of remembered values holds before it is emptied


def _remembered(store: dict, key, make):
    """store[key], made by ``make()`` the first time it is asked for (what raises is not
    remembered); a store that has reached _VALUES_KEPT entries is emptied first."""
    if key not in store:
        if len(store) >= _VALUES_KEPT:
            store.clear()
        store[key] = make()
    return store[key]


def _integrated(side: Expr, model: Model, substitution: dict) -> tuple:
    """The value of one side and the size of its terms.  A chain's right side is the next
    step's left side: each is integrated once per model, point, dimension and precision."""
    key = (id(model), frozenset(substitution.items()), mpmath.mp.dps, side)
    # the entry holds the model, so that no other model can be given its id meanwhile
    return _remembered(_VALUES, key, lambda: (model, *_Evaluation(
        model, substitution, mpmath.mp.dps).value_and_size(side)))[1:]


POINTWISE_DRAWS = 3
# A claim about coordinates of bounded range may fail only with more coordinates than the
# quadrature's dimensions (an entropy floor first fails at n = 8): corners are also tried here.
CORNER_DIMENSIONS = (8, 16)
POINTWISE_SCALES = (8, 1 / 8)
# Quadrature here is exact, so two sides that agree to fewer than this many digits at 45-digit
# working precision differ; between this and the required digits the check is undecided.
DIFFERENT_BELOW = 10


def _pointwise_pairs(sides, model, substitution, point, dim, only=None):
    """Both sides at coordinates the model can produce (supports): seeded draws, draws scaled
    up and down as far as the support allows (for a softmax: near one-hot and near uniform), a
    tie, and for bounded latents the corners of the support, exactly; derivatives by mpmath's
    numerical differentiation, not SymPy's; each side with the size of its terms.  With
    ``only``, the pairs at those positions of the list of points."""
    rng = np.random.default_rng(2026)
    coordinates = sorted(random_coordinates(sides[0]) | random_coordinates(sides[1]),
                         key=sp.default_sort_key)
    sources = [Draws(rng)] * POINTWISE_DRAWS + [Scaled(rng, f) for f in POINTWISE_SCALES] \
        + [Tie(rng)]
    points = [_drawn_point(model, source, coordinates, dim, point) for source in sources]
    if bounded_latents(model, point):
        points += [{c: mpmath.mpf(sp.N(v, mpmath.mp.dps)) for c, v in exact.items()}
                   for exact in exact_points(model, coordinates, dim, point)]
    for values in (v for n, v in enumerate(points) if only is None or n in only):
        value_of = evaluator(values)
        (lhs, lhs_size), (rhs, rhs_size) = (_pointwise_side(side, values, value_of)
                                            for side in sides)
        yield lhs, rhs, (lhs_size, rhs_size), {str(c): mpmath.nstr(v, 12)
                                               for c, v in values.items()}


_POINTWISE: dict = {}  # (side, its coordinates' values, precision) -> (value, size)


def _pointwise_side(side: Expr, values: dict, value_of) -> tuple:
    """A side's value at the coordinates ``values`` and the size of its terms (at least its
    value's).  A chain's right side is the next step's left side, and both are drawn at the
    same points: each is evaluated once per point and precision."""
    key = (side, frozenset((c, values[c]) for c in random_coordinates(side)),
           mpmath.mp.prec, mpmath.mp.dps)

    def evaluated() -> tuple:
        value = value_of(side)
        return value, max(abs(value), pointwise_size(side, values, value_of=value_of))
    return _remembered(_POINTWISE, key, evaluated)


def _drawn_point(model: Model, source, coordinates: list, dim: int, point: dict) -> dict:
    """The coordinates at one draw from ``source``.  A model built from latents has them
    computed from its latents at the working precision, so that a Rademacher q_1 is
    sigma_q * (+-1) to every digit, not a double near it."""
    if not built_from_latents(model):
        draw = model.sample_from(source, 1, dim, point)
        return {c: mpmath.mpf(float(draw[c.base][0, int(c.indices[0]) - 1]))
                for c in coordinates}
    latents = {latent.name: [exact_latent(latent.family, float(x)) for x in source.standard(
        latent.family, slot, (1, 1 if latent.shared else dim))[0]]
        for slot, latent in enumerate(model.latents)}
    exact = model.exact_coordinates(latents, dim, point)
    return {c: mpmath.mpf(sp.N(exact[c], mpmath.mp.dps)) for c in coordinates}


def _numeric_counterexample(lhs, rhs, digits: float, where: dict) -> Verdict:
    values = f"{mpmath.nstr(lhs, 20)} versus {mpmath.nstr(rhs, 20)}"
    return Verdict(FAIL, f"sides differ at {format_point(where)}: {values}", digits=digits,
                   counterexample={**where, "lhs": mpmath.nstr(lhs, 25),
                                   "rhs": mpmath.nstr(rhs, 25)})


def pointwise_size(expr: Expr, values: dict, special=None, value_of=None) -> mpmath.mpf:
    """``term_size`` at the coordinates ``values``; a derivative counts with its function's
    size (which is what numerical differentiation's error scales with) or that of SymPy's
    derivative's terms (to which it was held, see ``_derivative_value``), and ``special`` may
    size other nodes itself (the numbers that stand in for nested moments).  ``value_of``, an
    ``evaluator`` at ``values``, lends the values it has found already."""
    value_of = value_of or evaluator(values)

    def derivative_size(node: Expr) -> mpmath.mpf | None:
        if isinstance(node, Derivative):  # as far as it was confirmed: SymPy's derivative
            symbolic = _taken_by_sympy(node)  # to the rounding of its terms
            return max(pointwise_size(node.expr, values, special),
                       pointwise_size(symbolic, values, special) if symbolic is not None
                       else mpmath.mpf(0))
        return special(node) if special else None
    try:
        return term_size(expr, value_of, derivative_size, _in_mpmath, exact_rationals=False)
    except ValueError as error:
        raise UnsupportedExpression(str(error)) from error


def _in_mpmath(expr: Expr, arguments: list):
    """expr's function at the values ``arguments``, when mpmath has it; None otherwise."""
    function = _IN_MPMATH.get(type(expr), _COMBINE.get(type(expr)))
    return function(*arguments) if function else None


_COMBINE = {sp.Add: lambda *a: mpmath.fsum(a), sp.Mul: lambda *a: mpmath.fprod(a),
            sp.Pow: lambda base, exponent: base ** exponent}


def _within_reach(function, extra_bits: int, exact_bits: bool):
    """``function``, refusing an argument beyond 2^(extra_bits), plus the working precision
    with ``exact_bits``: sin of 10^(10^9) needs pi to a billion digits, exp of it a number
    with a billion-digit exponent; neither says anything a check could use."""
    def guarded(x):
        if mpmath.isfinite(x) and mpmath.mag(x) > extra_bits + (mpmath.mp.prec if exact_bits
                                                                  else 0):
            raise UnsupportedExpression(f"{function.__name__} of {mpmath.nstr(x, 5)}: beyond "
                                        "what can be evaluated to any use")
        return function(x)
    return guarded


_IN_MPMATH = {sp.exp: _within_reach(mpmath.exp, 64, False), sp.log: mpmath.log,
              sp.sin: _within_reach(mpmath.sin, 64, True),
              sp.cos: _within_reach(mpmath.cos, 64, True),
              sp.tanh: mpmath.tanh, sp.Abs: abs, sp.Max: max, sp.Min: min}


def pointwise_value(expr: Expr, values: dict) -> mpmath.mpf:
    """The value of an expression in the coordinates at ``values`` (see ``evaluator``)."""
    return evaluator(values)(expr)


def evaluator(values: dict):
    """The values of expressions in the coordinates at ``values``, at the working precision:
    sums, products, powers and the usual functions in mpmath from their arguments' values,
    each node once (terms recur, and e^u is its own derivative), in microseconds where SymPy's
    adaptive evalf takes milliseconds; each derivative by mpmath.diff (which raises the
    precision while differentiating); any other node, and one whose value is not a finite
    real number, by SymPy.  What rounding at the working precision costs is ``term_size``'s
    to weigh, and the check's to see through by raising the precision (``_resolved``)."""
    known: dict = dict(values)
    # an entry q_i by its base and indices: == on an Indexed compares its assumptions, and
    # writing sums out makes a new q_i in every term
    entries = {c.args: v for c, v in values.items() if isinstance(c, Indexed)}

    def value_of(node: Expr) -> mpmath.mpf:
        if isinstance(node, Indexed):
            if node.args not in entries:
                entries[node.args] = _node_value(node, values, value_of)
            return entries[node.args]
        if node not in known:
            known[node] = _node_value(node, values, value_of)
        return known[node]
    return value_of


def _node_value(node: Expr, values: dict, value_of) -> mpmath.mpf:
    if isinstance(node, MOMENT_FUNCTIONS):  # E[z_1] under d/dz_1: no function of z_1
        raise UnsupportedExpression(f"{show(node)}: a moment where the coordinates take values")
    if node.is_Rational:
        return mpmath.mpf(int(node.p)) / int(node.q)
    if node.is_Float:
        return mpmath.mpf(node)
    if isinstance(node, Derivative):
        return _derivative_value(node, values, value_of)
    function = _IN_MPMATH.get(type(node), _COMBINE.get(type(node)))
    if function is not None:
        try:
            value = function(*(value_of(a) for a in node.args))
        except UnsupportedExpression:
            raise  # beyond evaluation: SymPy would not get further, only take longer
        except (ArithmeticError, TypeError, ValueError):
            value = None
        if isinstance(value, mpmath.mpf) and mpmath.isfinite(value):
            return value
    return _evaluated_by_sympy(node, value_of)


def _derivative_value(node: Derivative, values: dict, value_of) -> mpmath.mpf:
    """A derivative by mpmath.diff, one variable at a time (the first outside, the rest
    inside), held against SymPy's derivative at the same point.  Differences with a step h
    cannot see what varies faster than h (10 v + 5 sin(pi W v) / (pi W) with W h = 1 has
    slope 10 to them), and SymPy has differentiated max(f, f, f) as 3/2 f': the value
    counts only where the two agree to the working precision, beyond what rounding explains
    (the derivative's size: that of its function's terms, or of SymPy's derivative's)."""
    (variable, count), *rest = node.variable_count
    if variable not in values:  # d/dc at c = 1, as Subs writes it: c has no value here
        raise UnsupportedExpression(f"{show(node)}: a derivative with respect to {variable}, "
                                    "which takes no value where it is evaluated")
    inner = Derivative(node.expr, *rest) if rest else node.expr

    def along(t):
        return pointwise_value(inner, {**values, variable: t})
    value = mpmath.diff(along, values[variable], int(count))
    symbolic = _taken_by_sympy(node)
    if symbolic is None:
        raise UnsupportedExpression(f"{show(node)}: SymPy cannot take this derivative, so the "
                                    "numerical one has nothing to be held against")
    other, noise = value_of(symbolic), mpmath.mpf(10) ** (NOISE_DIGITS - mpmath.mp.dps)
    # the size is sought only where the values differ beyond their own noise
    if abs(value - other) > noise * abs(value) and abs(value - other) > noise * max(
            abs(value), pointwise_size(node, values)):
        raise UnsupportedExpression(
            f"{show(node)} is {mpmath.nstr(value, 15)} by numerical differentiation but "
            f"{mpmath.nstr(other, 15)} by SymPy's derivative at the point tried")
    return value


@lru_cache(maxsize=1024)
def _taken_by_sympy(node: Derivative) -> Expr | None:
    taken = node.doit()
    return None if taken.has(Derivative, sp.Subs) else taken


def _evaluated_by_sympy(expr: Expr, value_of) -> mpmath.mpf:
    """SymPy's evalf of expr, the values of its arguments put in (a complex value, a pole, or
    what mpmath has no function for)."""
    arguments = [sp.Float(value_of(a), mpmath.mp.dps) if a.free_symbols or a.has(Derivative)
                 else a for a in expr.args]
    try:
        return mpmath.mpf(sp.N(expr.func(*arguments) if arguments else expr, mpmath.mp.dps))
    except (ValueError, TypeError) as error:  # a complex value, or SymPy's Max of one
        raise UnsupportedExpression(f"{show(expr)} is not a real number at the point "
                                    f"tried: {error}") from error
