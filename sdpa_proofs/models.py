"""Probability models for the random vectors of a derivation.

A model answers three kinds of question, one per checker:
- symbolic: exact joint moments of coordinates, its means and variances, which coordinates are
  independent (the preconditions of the rules);
- numerical: integrate a function of the coordinates against the model's joint density;
- Monte Carlo: draw samples.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from itertools import product

import mpmath
import numpy as np
import sympy as sp
from sympy import Expr, Indexed, IndexedBase, Rational, Symbol

from .algebra import random_value, small_integers, without_numbers
from .distributions import FAMILIES, NORMAL, UNIFORM, Family, standard_rule
from .errors import BadInput, UnsupportedExpression
from .expressions import RandomVector, SymmetricMatrix
from .realnumbers import approximation, nearest_double
from .supports import Draws
from .symbols import d, k, ktilde, n, q, s, sigma_k, sigma_q, z
from .text import show


def indices_known_distinct(a, b, distinct: frozenset) -> bool:
    if a.is_Integer and b.is_Integer:
        return a != b
    return frozenset((a, b)) in distinct


@dataclass(eq=False)
class Model:
    """Base class: subclasses fill in the moments, the independence structure and the sampler."""

    name: str = ""
    title: str = ""
    dimension: Symbol = d
    parameter_points: list[dict] = field(default_factory=list)

    @property
    def vectors(self) -> tuple[RandomVector, ...]:
        raise NotImplementedError

    @property
    def indexed_parameters(self) -> tuple[IndexedBase, ...]:
        """Deterministic indexed quantities the model gives values (covariance entries)."""
        return ()

    def parameter_rank(self, parameter: IndexedBase) -> int:
        """How many indices an indexed parameter takes (a mean vector 1, a matrix 2)."""
        return 1

    @property
    def constants(self) -> tuple[Expr, ...]:
        """The expressions the model's law is written with (loadings, means): rules and the
        moment engine bring them into a step."""
        return ()

    def with_constants(self, constants: list) -> Model:
        """The same model with ``constants`` in place of its own, in their order."""
        return self

    def assumptions(self) -> list[str]:
        """The model's assumptions as LaTeX sentences."""
        raise NotImplementedError

    def mean(self, coordinate: Indexed) -> Expr:
        """E[v_i] for the coordinate v_i."""
        raise NotImplementedError

    def variance(self, coordinate: Indexed) -> Expr:
        """Var(v_i) for the coordinate v_i."""
        raise NotImplementedError

    def concrete(self, point: dict, dim: int) -> dict:
        """The substitution for a parameter point at dimension ``dim`` (models whose parameters
        are matrices add their entries)."""
        return {self.dimension: sp.Integer(dim), **point}

    def joint_moment(self, blocks: list[dict], tilts: list[dict] | None = None) -> Expr:
        """E[prod over blocks prod_v v_b^power * e^(sum_v t_v v_b)] for pairwise distinct
        coordinates b; ``tilts`` (one dict vector -> t per block) default to none."""
        raise NotImplementedError

    def dependence(self, a: Indexed, b: Indexed, distinct: frozenset) -> str | None:
        """None when coordinates a and b are independent, else why they may not be."""
        raise NotImplementedError

    @property
    def is_gaussian(self) -> bool:
        """Whether all coordinates are jointly Gaussian (Isserlis' theorem applies)."""
        return False

    #: True for models whose moments depend on the index values themselves (a general
    #: covariance matrix), not only on which indices coincide
    index_generic = False

    def covariance(self, a: Indexed, b: Indexed, same_coordinate: bool) -> Expr:
        """Cov(a, b) for coordinates with equal (``same_coordinate``) or distinct indices."""
        raise NotImplementedError

    def integrate(self, f, variables: list[Indexed], degrees: dict | None, point: dict,
                  dps: int) -> tuple:
        """(E[f], E[|f|]) for f a function of ``variables``, at parameter values ``point``;
        exact when ``degrees`` (the degree of f in each variable) is given."""
        raise NotImplementedError

    def integration_key(self, variables: list[Indexed]) -> tuple | None:
        """What the law of ``variables`` and ``integrate``'s arithmetic take from them: for the
        same integrand as a function of the variables' positions, equal keys give the same
        numbers step for step, so that one result serves both; None where no such promise is
        made."""
        return None

    def sample(self, rng: np.random.Generator, n: int, dim: int, point: dict) -> dict:
        """n draws of every vector at dimension ``dim``: vector -> array of shape (n, dim)."""
        raise NotImplementedError

    def tail_points(self, variables: list[Indexed], point: dict, dps: int) -> list[tuple]:
        """(log of the density there, values of ``variables``) far out in the tails of the
        model's law, where an integrand whose terms have not died out has mass no quadrature
        node sees (see ``tail_probes``); none for a model that does not say."""
        return []

    def iid_reason(self, vectors) -> str | None:
        """None when the tuples (v_i for v in ``vectors``), i = 1, 2, ..., are independent and
        identically distributed, else why that is not known."""
        return f"model {self.name} does not make its coordinates i.i.d. across the index"

    def sample_from(self, source, n: int, dim: int, point: dict) -> dict:
        """``sample`` with the randomness taken from ``source``, which hands out standardised
        draws that other models of a run may share (``source.standard(family, slot, shape)``)
        and generators of a model's own (``source.generator(key)``).  A model whose vectors
        are not built from standardised latents draws from a generator of its own, and the
        source may then rework its vectors as a whole (``supports.Scaled``)."""
        return source.whole(self.sample(source.generator(self.name), n, dim, point))

    @property
    def coordinatewise(self) -> bool:
        """Whether ``sample_from`` builds each coordinate from the source's draws at that
        coordinate alone, so that n draws at dimension d are n d draws at dimension 1 in
        rows of d (what lets a sampler build them once for every d)."""
        return False


def isserlis_moment(factors: list, mean, covariance) -> Expr:
    """E[X_1 ... X_n] for jointly Gaussian X_t (Isserlis/Wick, with means): the sum over partial
    pairings of the product of the paired covariances and the unpaired means."""
    if not factors:
        return sp.S.One
    first, rest = factors[0], factors[1:]
    total = mean(first) * isserlis_moment(rest, mean, covariance)
    for position, partner in enumerate(rest):
        remaining = rest[:position] + rest[position + 1:]
        total += covariance(first, partner) * isserlis_moment(remaining, mean, covariance)
    return sp.expand(total)


def _maybe_equal(a: Indexed, b: Indexed) -> str:
    (ia,), (ib,) = a.indices, b.indices
    if ia == ib:
        return f"{show(a)} appears in both, and a coordinate is not independent of itself"
    return f"{show(a)} and {show(b)} may be the same coordinate: {ia} ≠ {ib} is not known here"


def is_correlation(symbol: Symbol) -> bool:
    """A parameter named rho is a correlation: it lies in [-1, 1] (validation holds every
    parameter point to that)."""
    return str(symbol) == "rho"


def _straddling(symbol: Symbol, value: Rational, which: int, loads: bool) -> Rational:
    """The value moved to the side of 1 and the sign that point ``which`` of POINT_REGIONS
    asks for (a parameter of fixed sign keeps its sign, a correlation stays within 1): r <= r^2
    fails only on (0, 1), r^2 <= r only outside [0, 1], r^3 <= r^2 only beyond 1 (review
    rounds 81 and 84: r at 28/25 and -53/18 saw the first, 1/2 and -2 the last)."""
    if symbol.is_integer:
        return _integer_at(symbol, value, which, loads)
    beyond, positive = POINT_REGIONS[which]
    if abs(value) == 1:  # no side of 1
        value *= Rational(3, 2)
    if (abs(value) > 1) != (beyond and not is_correlation(symbol)):
        value = 1 / value
    if symbol.is_positive or symbol.is_nonnegative or symbol.is_negative \
            or symbol.is_nonpositive:
        return value
    return abs(value) if positive else -abs(value)


def _integer_at(symbol: Symbol, value: sp.Integer, which: int, loads: bool) -> sp.Integer:
    """An integer parameter at point ``which``: its two values nearest 0 at the points within
    1 (small_integers: 0 and 1 where it may be 0, but never 0 for a loading, which would leave
    a vector without a law), where a claim about an integer is most often false; at least 3 at
    the others, signed as POINT_REGIONS asks where the sign is free."""
    beyond, positive = POINT_REGIONS[which]
    if not beyond:
        return small_integers(symbol, 2, nonzero=loads)[0 if which == 0 else 1]
    if symbol.is_nonnegative or symbol.is_nonpositive:
        positive = bool(symbol.is_nonnegative)
    size = max(sp.Integer(3), abs(value))
    if (symbol.is_even and size.is_odd) or (symbol.is_odd and size.is_even):
        size += 1  # an even parameter is never given 3
    return size if positive else -size


#: (beyond 1, positive) at each chosen point: each parameter of free sign visits every region
#: that sign and size make, which is where a polynomial claim in it changes truth most often
POINT_REGIONS = ((False, True), (True, False), (True, True), (False, False))


def mp_value(x) -> mpmath.mpf:
    """A parameter value at the working precision (exactly, for a rational; otherwise proven
    to 10 more digits: SymPy's evalf takes 10^70 log(1 + 10^-70) for 0)."""
    x = sp.sympify(x)
    if isinstance(x, Rational):
        return mpmath.mpf(int(x.p)) / int(x.q)
    return approximation(x, mpmath.mp.prec + 34)


def double_value(x) -> float:
    """A parameter value as the nearest double, proven (see mp_value)."""
    x = sp.sympify(x)
    return float(x) if isinstance(x, Rational) else nearest_double(x)


@dataclass(frozen=True)
class Latent:
    """A standardised latent variable (mean 0, variance 1) of a family: ``shared`` ones take one
    value for all coordinates (a common factor z), the others one independent value per
    coordinate (noise e_i)."""

    name: str
    family: Family
    shared: bool = False


@dataclass(eq=False)
class LatentLinearModel(Model):
    """Coordinates that are affine in independent latent variables:

        v_i = mu_v + sum_L c_{v,L} L_i + sum_G c_{v,G} G,

    L local (one per coordinate), G shared.  Independent coordinates, k a multiple of q,
    per-coordinate correlation and shared factors are all of this form.  Given the shared
    latents the coordinates are independent across i, which makes exact moments computable for
    symbolic d and lets the numerical check integrate over the latents.
    """

    latents: tuple[Latent, ...] = ()
    loadings: dict = field(default_factory=dict)  # RandomVector -> {latent name: coefficient}
    means: dict = field(default_factory=dict)     # RandomVector -> mean (default 0)
    description: tuple[str, ...] = ()

    @property
    def constants(self) -> tuple[Expr, ...]:
        return tuple(sp.sympify(c) for loads in self.loadings.values() for c in loads.values()) \
            + tuple(sp.sympify(mean) for mean in self.means.values())

    def with_constants(self, constants: list) -> Model:
        if list(constants) == list(self.constants):
            return self
        given = iter(constants)
        loadings = {v: {name: next(given) for name in loads} for v, loads in self.loadings.items()}
        means = {v: next(given) for v in self.means}
        return replace(self, loadings=loadings, means=means)

    def __post_init__(self):
        self._latent = {latent.name: latent for latent in self.latents}
        self._moments: dict = {}
        self._floats: dict = {}
        self.name = self.name or "latent-model"
        self.title = self.title or self.name
        if not self.parameter_points:
            self.parameter_points = self._chosen_points()

    def _chosen_points(self) -> list[dict]:
        """Parameter points for a model defined without them, one per POINT_REGIONS: seeded
        values that respect each parameter's assumptions and make every loading and mean a
        finite real number (so sqrt(1 - rho^2) gets |rho| < 1); the points differ in every
        parameter."""
        parameters = sorted({x for e in [*self.means.values(),
                                        *(c for loads in self.loadings.values()
                                          for c in loads.values())]
                             for x in sp.sympify(e).free_symbols
                             if x != self.dimension}, key=str)
        if not parameters:
            return [{}]  # nothing to vary: the model's one law
        loading = {x for loads in self.loadings.values() for c in loads.values()
                   for x in sp.sympify(c).free_symbols}
        rng, points = random.Random(20261130), []
        for attempt in range(200):
            point = {x: random_value(x, rng) for x in parameters}
            if attempt < 100:  # then any values the assumptions allow (|rho| < 1 at all)
                point = {x: _straddling(x, value, len(points), x in loading)
                         for x, value in point.items()}
            if point not in points and all(point[x] != p[x] for p in points for x in point) \
                    and self._real_at(point):
                points.append(point)
            if len(points) == len(POINT_REGIONS):
                return points
        if len(points) >= 2:  # some region makes a loading complex: the others are enough
            return points
        raise BadInput(f"model {self.name}: no parameter values found that make every loading "
                       "real and finite; give parameter_points=[...] yourself")

    def _real_at(self, point: dict) -> bool:
        values = [sp.sympify(e).xreplace(point) for e in self.means.values()] + \
            [sp.sympify(c).xreplace(point) for loads in self.loadings.values()
             for c in loads.values()]
        return all(v.is_real and v.is_finite for v in values)

    @property
    def vectors(self):
        return tuple(self.loadings)

    @property
    def is_gaussian(self) -> bool:
        return all(latent.family is NORMAL for latent in self.latents)

    def assumptions(self):
        return list(self.description)

    def mean(self, coordinate):
        return self.means.get(coordinate.base, sp.S.Zero)

    def variance(self, coordinate):
        return sp.Add(*(c ** 2 for c in self.loadings[coordinate.base].values()))

    def covariance(self, a: Indexed, b: Indexed, same_coordinate: bool) -> Expr:
        """Cov(a, b) for coordinates with equal (``same_coordinate``) or distinct indices."""
        total = sp.S.Zero
        for name, c in self.loadings[a.base].items():
            if self._latent[name].shared or same_coordinate:
                total += c * self.loadings[b.base].get(name, 0)
        return total

    def dependence(self, a, b, distinct):
        (ia,), (ib,) = a.indices, b.indices
        separate = indices_known_distinct(ia, ib, distinct)
        for name, c in self.loadings[a.base].items():
            if c == 0 or self.loadings[b.base].get(name, 0) == 0:
                continue
            if self._latent[name].shared:
                return (f"{show(a)} and {show(b)} are dependent in this model: both load on "
                        f"the shared factor {name}")
            if not separate:
                if a.base == b.base:
                    return _maybe_equal(a, b)
                return (f"{show(a)} and {show(b)} are dependent in this model: both are built "
                        f"from its latent {name}_{show(ia)} ({self._latent[name].family.name})")
        return None

    def joint_moment(self, blocks, tilts=None):
        tilts = tilts or [{} for _ in blocks]
        key = tuple((tuple(sorted(((v.label, p) for v, p in block.items()), key=str)),
                     tuple(sorted(((v.label, t) for v, t in tilt.items()), key=str)))
                    for block, tilt in zip(blocks, tilts))
        if key not in self._moments:
            self._moments[key] = self._joint_moment(blocks, tilts)
        return self._moments[key]

    def _joint_moment(self, blocks: list[dict], tilts: list[dict]) -> Expr:
        """Write every coordinate in terms of latent symbols (fresh local ones per block, the
        same shared ones throughout), expand, and take the latents' moments.  An exponential
        factor e^(t L) of a standard Gaussian latent L is its moment generating function times
        a shift: E[g(L) e^(t L)] = e^(t^2/2) E[g(L + t)] (completing the square)."""
        # Dummies: a parameter of the user's named like a latent must stay a parameter
        shared = {n: sp.Dummy(n) for n, lat in self._latent.items() if lat.shared}
        factors, exponent = [], sp.S.Zero
        families = {shared[n]: self._latent[n].family for n in shared}
        for b, (block, tilt) in enumerate(zip(blocks, tilts)):
            local = {n: sp.Dummy(f"{n}_{b}") for n, lat in self._latent.items()
                     if not lat.shared}
            families.update({local[n]: self._latent[n].family for n in local})
            values = {**shared, **local}
            factors += [(self._in_latents(vector, values), power)
                        for vector, power in block.items()]
            for vector, t in tilt.items():
                exponent += t * self._in_latents(vector, values)
        if exponent != 0:
            factors, scale = self._tilt(factors, sp.expand(exponent), families)
            return sp.expand(scale * self._moment_of(factors, families))
        return self._moment_of(factors, families)

    def _in_latents(self, vector, values: dict) -> Expr:
        """A coordinate of ``vector`` written in the latent symbols ``values``."""
        return self.means.get(vector, 0) + sp.Add(
            *(c * values[n] for n, c in self.loadings[vector].items()))

    def _tilt(self, factors: list[tuple], exponent: Expr, families: dict) -> tuple[list, Expr]:
        """(the factors with each tilted latent shifted, the factor e^(c + sum t^2/2))."""
        shifts = {sym: exponent.coeff(sym) for sym in families if exponent.has(sym)}
        for sym, t in shifts.items():
            if families[sym] is not NORMAL or t.has(*families):
                raise UnsupportedExpression(
                    f"an exponential of coordinates under model {self.name}: its moment "
                    f"generating function is known here for Gaussian latents only (this one "
                    f"is {families[sym].name})")
        constant = sp.expand(exponent - sp.Add(*(t * sym for sym, t in shifts.items())))
        shift = {sym: sym + t for sym, t in shifts.items()}
        shifted = [(factor.xreplace(shift), power) for factor, power in factors]
        return shifted, sp.exp(constant + sp.Add(*(t ** 2 for t in shifts.values())) / 2)

    def _moment_of(self, factors: list[tuple], families: dict) -> Expr:
        """E[prod f^p] over the (f, p) for f polynomial in the latents, from the families'
        moments: the product multiplied out as a polynomial in the latents, factor by factor
        (Poly's arithmetic, where reading the expanded product back in took longer than all
        the rest)."""
        symbols = list(families)
        if not symbols:
            return sp.expand(sp.Mul(*(f ** p for f, p in factors)))
        product_ = sp.Poly(1, *symbols)
        for factor, power in factors:
            product_ *= sp.Poly(factor, *symbols) ** power
        total = sp.S.Zero
        for exponents, coefficient in product_.terms():
            term = coefficient
            for sym, power in zip(symbols, exponents):
                term *= families[sym].moment(power, sp.S.One)
            total += term
        return sp.expand(total)

    def integrate(self, f, variables, degrees, point, dps):
        """Tensor Gauss rules over the latents that ``variables`` involve, exact for a
        polynomial f: its degree in a latent is at most the sum of the degrees of the
        coordinates loading on it."""
        if degrees is None:
            raise ValueError("non-polynomial integrand")
        axes = self._axes(variables, degrees)
        rules = [standard_rule(self._latent[name].family,
                               self._latent[name].family.points_for_degree(degree), dps)
                 for name, _, degree in axes]
        coordinates = self._coordinates(variables, axes, point)
        return tensor_sum(lambda *latent_values: f(*coordinates(latent_values)), rules)

    def integration_key(self, variables):
        """Each variable's vector and the rank of its index among the variables' indices: the
        axes, rules and loadings ``integrate`` uses depend on nothing else (a coordinate's
        loadings are the same at every index)."""
        indices = sorted({v.indices[0] for v in variables}, key=sp.default_sort_key)
        return tuple((v.base, indices.index(v.indices[0])) for v in variables)

    def tail_points(self, variables, point, dps):
        axes = self._axes(variables, dict.fromkeys(variables, 1))
        families = [self._latent[name].family for name, _, _ in axes]
        return tail_probes(families, self._coordinates(variables, axes, point), dps)

    def _axes(self, variables: list, degrees: dict) -> list[tuple]:
        """(latent name, index or None for a shared latent, degree) for each latent value the
        variables load on, with the degree it enters f with."""
        indices = sorted({v.indices[0] for v in variables}, key=sp.default_sort_key)
        axes = []
        for name, latent in self._latent.items():
            loading = [v for v in variables if self.loadings[v.base].get(name, 0) != 0]
            if latent.shared:
                axes.append((name, None, sum(degrees[v] for v in loading)))
            else:
                for index in indices:
                    axes.append((name, index, sum(degrees[v] for v in loading
                                                  if v.indices[0] == index)))
        return [axis for axis in axes if axis[2] > 0]

    def _coordinates(self, variables: list, axes: list, point: dict):
        """The variables' values as a function of the latent values along ``axes``."""
        coefficients = {v: self._mp_loadings(v.base, point) for v in variables}
        position = {(name, index): n for n, (name, index, _) in enumerate(axes)}

        def at(latent_values) -> list:
            coordinates = []
            for v in variables:
                loads, mean = coefficients[v]
                value = mean
                for name, c in loads.items():
                    where = position.get((name, None if self._latent[name].shared
                                          else v.indices[0]))
                    if where is not None:
                        value += c * latent_values[where]
                coordinates.append(value)
            return coordinates
        return at

    def sample(self, rng, n, dim, point):
        return self.sample_from(Draws(rng), n, dim, point)

    def sample_from(self, source, n, dim, point):
        """The latents are standardised draws: a model's latents take distinct slots of the
        source (so they are independent), which other models of the run may share, and each
        vector is the source's linear combination of them (``Draws.combined``)."""
        draws = {latent.name: source.standard(latent.family, slot,
                                              (n, 1) if latent.shared else (n, dim))
                 for slot, latent in enumerate(self.latents)}
        return {vector: source.combined([(draws[name], c) for name, c in terms], mean, (n, dim))
                for vector, (terms, mean) in self._numbers(point).items()}

    @property
    def coordinatewise(self) -> bool:
        """Without a shared latent each coordinate is built from its own latents alone."""
        return not any(latent.shared for latent in self.latents)

    def exact_coordinates(self, latents: dict, dim: int, point: dict) -> dict:
        """The coordinates v_i, i = 1..dim, as exact numbers when each latent takes the values
        latents[name] (one per coordinate, or one for a shared latent), at a parameter point."""
        values = {}
        for vector in self.vectors:
            mean = sp.sympify(self.means.get(vector, 0)).xreplace(point)
            for position in range(dim):
                values[vector[position + 1]] = mean + sum(
                    sp.sympify(c).xreplace(point)
                    * latents[name][0 if self._latent[name].shared else position]
                    for name, c in self.loadings[vector].items())
        return values

    def iid_reason(self, vectors):
        """Loadings and means are the same for every coordinate; only a shared latent ties
        coordinates with different indices together."""
        for vector in sorted(vectors, key=str):
            for name, c in self.loadings.get(vector, {}).items():
                if c != 0 and self._latent[name].shared:
                    return (f"the coordinates of {vector} share the factor {name}: they are "
                            "dependent across the index, not i.i.d.")
        return None

    def row_latents(self) -> set[str]:
        """The latents drawn once per attention row: those the query loads on (a row has one
        query).  A key's other latents are drawn afresh for each key, so two keys of a row
        share exactly the row's latents."""
        return {name for name, c in self.loadings.get(q, {}).items() if c != 0}

    def with_second_key(self) -> LatentLinearModel:
        """This model with k~, a second key of the same row as k: k's loadings and mean, each
        per-key latent replaced by a fresh copy (a model that has k~ already is returned as
        it is)."""
        if ktilde in self.loadings:
            return self
        row, names = self.row_latents(), {latent.name for latent in self.latents}
        copies = {}
        for name in self.loadings[k]:
            if name not in row:
                copy = name + "2"
                while copy in names:
                    copy += "2"
                copies[name] = copy
                names.add(copy)
        latents = self.latents + tuple(Latent(copies[latent.name], latent.family, latent.shared)
                                       for latent in self.latents if latent.name in copies)
        loadings = {**self.loadings, ktilde: {copies.get(name, name): c
                                              for name, c in self.loadings[k].items()}}
        means = {**self.means, **({ktilde: self.means[k]} if k in self.means else {})}
        return replace(self, name=f"{self.name} (two keys of a row)", latents=latents,
                       loadings=loadings, means=means)

    def sample_rows(self, rng: np.random.Generator, rows: int, n: int, dim: int,
                    point: dict) -> tuple[np.ndarray, np.ndarray]:
        """``rows`` attention rows: the query (rows, dim) and its n keys (rows, n, dim), the
        row's latents drawn once per row and the others once per key."""
        row = self.row_latents()
        draws = {latent.name: latent.family.sample(
            rng, (rows, 1 if latent.name in row else n, 1 if latent.shared else dim), 1.0)
            for latent in self.latents}

        numbers = self._numbers(point)

        def vector(v):
            terms, value = numbers[v]
            for name, c in terms:
                value = value + c * draws[name]
            return np.broadcast_to(value, (rows, n, dim))

        return vector(q)[:, 0, :], vector(k)

    def _mp_loadings(self, vector, point: dict) -> tuple[dict, mpmath.mpf]:
        """A vector's loadings and mean at a parameter point, at the working precision
        (computed once per point and precision: every integral asks for them)."""
        key = (vector, frozenset(point.items()), mpmath.mp.prec)
        if key not in self._floats:
            self._floats[key] = ({n: mp_value(sp.sympify(c).xreplace(point))
                                  for n, c in self.loadings[vector].items()},
                                 mp_value(sp.sympify(self.means.get(vector, 0)).xreplace(point)))
        return self._floats[key]

    def _numbers(self, point: dict) -> dict:
        """Each vector's loadings and mean as floats at a parameter point (computed once per
        point: the samplers build vectors chunk by chunk)."""
        key = frozenset(point.items())  # not sorted: this runs once per chunk
        if key not in self._floats:
            self._floats[key] = {
                vector: ([(name, double_value(sp.sympify(c).xreplace(point)))
                          for name, c in loads.items()],
                         double_value(sp.sympify(self.means.get(vector, 0)).xreplace(point)))
                for vector, loads in self.loadings.items()}
        return self._floats[key]


# built from their symbols, as the standard vectors are (symbols.py)
Sigma_qq = SymmetricMatrix(sp.Symbol("Sigma_qq", real=True))
Sigma_kk = SymmetricMatrix(sp.Symbol("Sigma_kk", real=True))
Sigma_qk = IndexedBase(sp.Symbol("Sigma_qk", real=True))  # Cov(q_i, k_j) = Sigma_qk[i, j]
m_q = IndexedBase(sp.Symbol("m_q", real=True))
m_k = IndexedBase(sp.Symbol("m_k", real=True))
covariance_pattern = sp.Symbol("covariance_pattern")  # which concrete B, D, means to use
query_value = IndexedBase(sp.Symbol("u", real=True))  # the value q = u a query is conditioned on


@dataclass(eq=False)
class GaussianMatrixModel(Model):
    """q, k jointly Gaussian with general covariance blocks Sigma_qq, Sigma_kk, Sigma_qk (and
    means m_q, m_k).  Its moments depend on the index values, so the exact engine keeps them as
    sums of matrix entries (Isserlis with symbolic indices).  For the numerical check each
    parameter point is a concrete covariance C = B B^T + diag(D) at every d, with B of rank two
    so that every coordinate is correlated with every other."""

    with_means: bool = False
    independent_keys: bool = False  # Sigma_qk = 0: the key independent of the query (a row)
    #: the query held at a value u (query_value): only k is random, with the law it has given
    #: q = u, which is its own law because the keys of a row are independent of the query
    given_query: bool = False
    index_generic = True

    def __post_init__(self):
        if self.given_query and not self.independent_keys:
            raise BadInput(f"model {self.name!r}: a query held at a value leaves the key's law "
                           "unchanged only when the key is independent of it "
                           "(independent_keys=True)")

    @property
    def vectors(self):
        return (k,) if self.given_query else (q, k)

    @property
    def indexed_parameters(self):
        if self.given_query:
            return (Sigma_kk, m_k, query_value)
        return (Sigma_qq, Sigma_kk, Sigma_qk, m_q, m_k)

    @property
    def is_gaussian(self) -> bool:
        return True

    def parameter_rank(self, parameter):
        return 2 if parameter in (Sigma_qq, Sigma_kk, Sigma_qk) else 1

    def assumptions(self):
        means = r"means $m_q, m_k$" if self.with_means else r"mean $0$"
        if self.given_query:
            return [r"$k$ is a Gaussian vector with " + means.replace("m_q, ", "") + r" and "
                    r"covariance $\Sigma_{kk}$, drawn independently of the query, which is held "
                    r"at a value $q = u$: the law of $k$ given $q = u$ is its own, so every "
                    r"moment here is a moment conditional on $q = u$."]
        if self.independent_keys:
            return [r"$q$ and $k$ are independent Gaussian vectors with " + means + r" and "
                    r"covariances $\Sigma_{qq} = \operatorname{Cov}(q)$, "
                    r"$\Sigma_{kk} = \operatorname{Cov}(k)$: a key of the query's row, "
                    r"independent of it."]
        return [r"$(q, k)$ is jointly Gaussian with " + means + r" and covariance blocks "
                r"$\Sigma_{qq} = \operatorname{Cov}(q)$, $\Sigma_{kk} = \operatorname{Cov}(k)$ "
                r"and $(\Sigma_{qk})_{ij} = \operatorname{Cov}(q_i, k_j)$."]

    def mean(self, coordinate):
        if not self.with_means:
            return sp.S.Zero
        return (m_q if coordinate.base == q else m_k)[coordinate.indices[0]]

    def variance(self, coordinate):
        return self.covariance(coordinate, coordinate, True)

    def covariance(self, a, b, same_coordinate):
        (i,), (j,) = a.indices, b.indices
        if a.base == q and b.base == q:
            return Sigma_qq[i, j]
        if a.base == k and b.base == k:
            return Sigma_kk[i, j]
        if self.independent_keys:
            return sp.S.Zero
        return Sigma_qk[i, j] if a.base == q else Sigma_qk[j, i]

    def dependence(self, a, b, distinct):
        if self.independent_keys and a.base != b.base:
            return None
        return (f"{show(a)} and {show(b)} are jointly Gaussian with covariance "
                f"{show(self.covariance(a, b, None))}, which the model does not make zero")

    def concrete(self, point, dim):
        loadings, noise, means = self._structure(point, dim)
        covariance = loadings * loadings.T + sp.diag(*noise)
        values = {self.dimension: sp.Integer(dim), **point}
        for a in range(1, dim + 1):
            values[m_q[a]], values[m_k[a]] = means[a - 1], means[dim + a - 1]
            for b in range(1, dim + 1):
                values[Sigma_qq[a, b]] = covariance[a - 1, b - 1]
                values[Sigma_kk[a, b]] = covariance[dim + a - 1, dim + b - 1]
                values[Sigma_qk[a, b]] = covariance[a - 1, dim + b - 1]
            if self.given_query:  # a query value that is not special: uneven, signs mixed
                values[query_value[a]] = Rational((5 * a + 3 * int(point[covariance_pattern]))
                                                  % 9 - 4, 3)
        return values

    def _structure(self, point: dict, dim: int):
        """B (2d x 2), D and the means for parameter point ``point["_seed"]`` at dimension d;
        rows 0..d-1 are q_1..q_d, rows d..2d-1 are k_1..k_d."""
        seed = int(point[covariance_pattern])
        loadings = sp.Matrix(2 * dim, 2, lambda r, c: Rational(((r + 1) * (c + 3) + 2 * seed) % 7
                                                               - 3, 5 + seed))
        if self.independent_keys:  # q on factors 0, 1 only, k on factors 2, 3 only
            zeros = sp.zeros(dim, 2)
            loadings = sp.Matrix.vstack(sp.Matrix.hstack(loadings[:dim, :], zeros),
                                        sp.Matrix.hstack(zeros, loadings[dim:, :]))
        noise = [Rational(r % 3 + 2, 7 + seed) for r in range(2 * dim)]
        means = [Rational((3 * r + seed) % 5 - 2, 3 + seed) if self.with_means else sp.S.Zero
                 for r in range(2 * dim)]
        return loadings, noise, means

    def integrate(self, f, variables, degrees, point, dps):
        """Coordinates are m_r + B[r, 0] G_0 + B[r, 1] G_1 + sqrt(D_r) U_r with independent
        standard Gaussians: exact Gauss-Hermite over the two factors and the U_r involved."""
        if degrees is None:
            raise ValueError("non-polynomial integrand")
        factors, coordinates = self._coordinates(variables, point)
        total_degree = sum(degrees.values())
        rules = [standard_rule(NORMAL, NORMAL.points_for_degree(total_degree), dps)
                 for _ in range(factors)]
        rules += [standard_rule(NORMAL, NORMAL.points_for_degree(degrees[v]), dps)
                  for v in variables]
        return tensor_sum(lambda *values: f(*coordinates(values)), rules)

    def tail_points(self, variables, point, dps):
        factors, coordinates = self._coordinates(variables, point)
        return tail_probes([NORMAL] * (factors + len(variables)), coordinates, dps)

    def _coordinates(self, variables: list, point: dict) -> tuple:
        """How many factors the variables load on, and the variables' values as a function
        of those factors' values followed by one U_r per variable."""
        dim = int(point[self.dimension])
        loadings, noise, means = self._structure(point, dim)
        rows = [v.indices[0] - 1 + (dim if v.base == k else 0) for v in variables]
        factors = [c for c in range(loadings.cols)  # only the factors the variables load on
                   if any(loadings[r, c] != 0 for r in rows)]
        coefficients = [(mp_value(means[r]), [mp_value(loadings[r, c]) for c in factors],
                         mpmath.sqrt(mp_value(noise[r]))) for r in rows]

        def at(values) -> list:
            shared, local = values[:len(factors)], values[len(factors):]
            return [m + sum(b * g for b, g in zip(bs, shared)) + s * u
                    for (m, bs, s), u in zip(coefficients, local)]
        return len(factors), at

    def sample(self, rng, n, dim, point):
        # via lists: SymPy 1.12's Matrix.__array__ predates NumPy 2's copy keyword; the
        # entries are rationals, which float() rounds once
        loadings, noise, means = (np.array(x.tolist() if isinstance(x, sp.MatrixBase) else x,
                                           dtype=float) for x in self._structure(point, dim))
        factors = rng.normal(size=(n, loadings.shape[1]))
        values = means + factors @ loadings.T + np.sqrt(noise) * rng.normal(size=(n, 2 * dim))
        return {k: values[:, dim:]} if self.given_query else {q: values[:, :dim],
                                                              k: values[:, dim:]}


def tail_probes(families: list, coordinates, dps: int) -> list[tuple]:
    """Points far out in the tails of independent latents of ``families`` (one per axis; a
    bounded law has no tails and stays at 0): each latent alone at +-u, and all together
    with equal and with alternating signs, for u from where its density has fallen below
    10^-(2 dps + 10) (past the nodes of the rules used, and far enough that e^(a u) of a
    moment generating function has died out with the density), out to 64 times that
    (TAIL_REACHES).
    With each point the log of the latents' density there, and the variables' values
    (``coordinates`` of the latent values).  An integrand whose terms, weighted so, have not
    died out there has mass where no rule's nodes are (e^(c q^2) against a Gaussian, c just
    below 1/2: its E is 2^160, the nodes see 10^3)."""
    tails = [axis for axis, family in enumerate(families) if family.end is None]
    starts = {axis: _tail_start(families[axis], dps) for axis in tails}
    placements = [[(axis, sign)] for axis in tails for sign in (1, -1)]
    if len(tails) > 1:
        placements += [[(axis, sign * (-1) ** (j * alternate)) for j, axis in enumerate(tails)]
                       for sign in (1, -1) for alternate in (0, 1)]
    probes = []
    for times in TAIL_REACHES:
        for placement in placements:
            values = [mpmath.mpf(0)] * len(families)
            for axis, sign in placement:
                values[axis] = sign * times * starts[axis]
            log_weight = mpmath.fsum(families[axis].log_density(values[axis])
                                     for axis, _ in placement)
            probes.append((log_weight, coordinates(values)))
    return probes


# from where the density is negligible out to 64 times as far, a factor of sqrt(2) apart: a
# bump of mass between two probes shows at one of them unless it is narrower than about a
# tenth of the gap (the probes were 1, 8, 64 apart, and e^(t^2/2 - (t - 60)^2) hid at 60)
TAIL_REACHES = tuple(2 ** (n / 2) for n in range(13))


def _tail_start(family, dps: int) -> mpmath.mpf:
    """The first power of 2 where the family's density is below 10^-(2 dps + 10)."""
    floor, reach = -(2 * dps + 10) * mpmath.log(10), mpmath.mpf(1)
    while family.log_density(reach) > floor:
        reach *= 2
    return reach


def tensor_sum(f, rules: list[list]) -> tuple:
    """sum over the product grid of prod(weights) * f(nodes), and the same for |f|."""
    total = abs_total = mpmath.mpf(0)
    for combination in product(*rules):
        weight = mpmath.mpf(1)
        for w, _ in combination:
            weight *= w
        value = f(*(x for _, x in combination))
        total += weight * value
        abs_total += weight * abs(value)
    return total, abs_total


rho = sp.Symbol("rho", real=True)
mu_q, mu_k = sp.symbols("mu_q mu_k", real=True)
alpha, beta = sp.symbols("alpha beta", real=True)

PARAMETER_POINTS = [
    {sigma_q: Rational(3, 7), sigma_k: Rational(5, 4), rho: Rational(2, 5),
     mu_q: Rational(1, 3), mu_k: Rational(-3, 4), alpha: Rational(2, 3), beta: Rational(5, 7)},
    {sigma_q: Rational(11, 5), sigma_k: Rational(2, 9), rho: Rational(-3, 7),
     mu_q: Rational(-2, 5), mu_k: Rational(7, 6), alpha: Rational(-1, 2), beta: Rational(3, 4)},
]


def _points(*symbols: Symbol) -> list[dict]:
    """The standard parameter points restricted to the symbols a model uses."""
    return [{s: point[s] for s in symbols} for point in PARAMETER_POINTS]


def _law(family: Family, sigma: Symbol) -> str:
    return family.latex.format(s=sp.latex(sigma))


def independent(family: Family, sd_q: Expr = sigma_q, sd_k: Expr = sigma_k,
                name: str = "") -> LatentLinearModel:
    """All 2d coordinates mutually independent with mean 0; q_i ~ family with standard
    deviation sd_q (sigma_q unless given: ``UNIFORM.sd_from(a)`` for Uniform(-a, a)), and so
    on.  A model with other standard deviations is named after them unless ``name`` says."""
    standard = (sd_q, sd_k) == (sigma_q, sigma_k)
    return LatentLinearModel(
        name=name or f"independent-{family.name.lower()}" + (
            "" if standard else f" (sd {sp.sstr(sd_q)}, {sp.sstr(sd_k)})"),
        title=f"independent {family.name} coordinates",
        dimension=d, parameter_points=_points(sigma_q, sigma_k) if standard else [],
        latents=(Latent("u", family), Latent("w", family)),
        loadings={q: {"u": sd_q}, k: {"w": sd_k}},
        description=(r"All coordinates $q_i, k_i$ ($1 \le i \le d$) are mutually independent "
                     r"with mean $0$.",
                     rf"$q_i \sim {_law(family, sd_q)}$, $k_i \sim {_law(family, sd_k)}$."))


def from_covariance(covariance, means: dict | None = None, family: Family = NORMAL,
                    vectors: tuple = (q, k), name: str = "", title: str = "",
                    dimension: Symbol = d) -> LatentLinearModel:
    """A model from the covariance of one coordinate's tuple (v_i for v in ``vectors``), the
    tuples independent and identically distributed across i: v = m + L u, for the Cholesky
    factor L of the covariance (C = L L^T) and independent standardised latents u of the
    family.  Jointly Gaussian for NORMAL; for another family, linear combinations of its
    latents with that covariance.  ``means`` maps a vector to its mean (default 0)."""
    if len(set(vectors)) < len(vectors):
        raise BadInput(f"from_covariance: the vectors {', '.join(map(str, vectors))} repeat one; "
                       "the covariance is of distinct vectors (Cov(q_i, q_i) is Var(q_i))")
    matrix = sp.Matrix(covariance)
    if matrix.shape != (len(vectors), len(vectors)) or not matrix.is_symmetric():
        raise BadInput(f"the covariance of {', '.join(map(str, vectors))} must be a symmetric "
                       f"{len(vectors)} x {len(vectors)} matrix, not {matrix.tolist()}")
    if matrix.is_positive_definite is False:
        raise BadInput(f"the covariance {matrix.tolist()} is not positive definite, so it has no "
                       "Cholesky factor")
    factor = matrix.cholesky(hermitian=False)
    names = [f"u{n + 1}" for n in range(len(vectors))]
    loadings = {v: {names[c]: sp.simplify(factor[r, c]) for c in range(r + 1)
                    if factor[r, c] != 0} for r, v in enumerate(vectors)}
    return LatentLinearModel(
        name=name, title=title or f"covariance {matrix.tolist()} per coordinate",
        dimension=dimension, latents=tuple(Latent(x, family) for x in names),
        loadings=loadings, means=dict(means or {}),
        description=(rf"The tuples $({', '.join(f'{v}_i' for v in vectors)})$, $1 \le i \le "
                     rf"{sp.latex(dimension)}$, are independent and identically distributed, "
                     r"with " + ", ".join(
                         rf"$\operatorname{{Cov}}({a}_i, {b}_i) = {sp.latex(matrix[r, c])}$"
                         for r, a in enumerate(vectors) for c, b in enumerate(vectors) if c >= r)
                     + "".join(rf", $\mathbb{{E}}[{v}_i] = {sp.latex(m)}$"
                               for v, m in (means or {}).items())
                     + (" (jointly Gaussian)" if family is NORMAL else
                        f" ({family.name} latents mixed by a Cholesky factor)") + ".",))


def aligned(family: Family) -> LatentLinearModel:
    """k = (sigma_k / sigma_q) q with independent zero-mean q_i ~ family(sigma_q)."""
    return LatentLinearModel(
        name=f"aligned-{family.name.lower()}",
        title=f"k a multiple of q, {family.name} coordinates",
        dimension=d, parameter_points=_points(sigma_q, sigma_k),
        latents=(Latent("u", family),), loadings={q: {"u": sigma_q}, k: {"u": sigma_k}},
        description=(rf"The coordinates $q_i \sim {_law(family, sigma_q)}$ are independent with "
                     r"mean $0$, and $k = (\sigma_k/\sigma_q)\, q$: each $k_i$ is a multiple of "
                     r"$q_i$.",))


def correlated(with_means: bool = False) -> LatentLinearModel:
    """(q_i, k_i) jointly Gaussian with correlation rho; the d pairs independent."""
    means = {q: mu_q, k: mu_k} if with_means else {}
    mean_text = r"means $\mu_q, \mu_k$" if with_means else r"mean $0$"
    return LatentLinearModel(
        name="correlated-normal-means" if with_means else "correlated-normal",
        title="per-coordinate correlation rho" + (", non-zero means" if with_means else ""),
        dimension=d,
        parameter_points=_points(sigma_q, sigma_k, rho, *((mu_q, mu_k) if with_means else ())),
        latents=(Latent("u", NORMAL), Latent("w", NORMAL)),
        loadings={q: {"u": sigma_q}, k: {"u": rho * sigma_k, "w": sp.sqrt(1 - rho**2) * sigma_k}},
        means=means,
        description=(r"The pairs $(q_i, k_i)$, $1 \le i \le d$, are independent of each other; "
                     r"each is jointly Gaussian with " + mean_text + r", variances "
                     r"$\sigma_q^2, \sigma_k^2$ and correlation $\rho$.",))


def shared_factor(same_factor: bool) -> LatentLinearModel:
    """q_i = alpha z + sigma_q e_i, k_i = beta z' + sigma_k f_i with z' = z or z' independent."""
    other = "z" if same_factor else "z2"
    latents = (Latent("z", NORMAL, shared=True),) + \
        (() if same_factor else (Latent("z2", NORMAL, shared=True),)) + \
        (Latent("e", NORMAL), Latent("f", NORMAL))
    relation = r"z' = z" if same_factor else r"z' \text{ independent of } z"
    return LatentLinearModel(
        name="shared-factor" if same_factor else "separate-factors",
        title="q and k load on one shared factor z" if same_factor
        else "q and k load on independent factors z, z'",
        dimension=d, parameter_points=_points(sigma_q, sigma_k, alpha, beta), latents=latents,
        loadings={q: {"z": alpha, "e": sigma_q}, k: {other: beta, "f": sigma_k}},
        description=(r"$q_i = \alpha z + \sigma_q e_i$ and $k_i = \beta z' + \sigma_k f_i$ with "
                     rf"${relation}$; $z, z', e_i, f_i$ independent standard Gaussians.",))


def row_models() -> tuple[LatentLinearModel, ...]:
    """One query q against two keys k, k~ of the same row (the keys independent given the
    row's factors): softmax sees the logits' differences, so these models say whether a latent
    factor is common to the row or differs from key to key, which decides what the difference
    keeps."""
    keys = (r"$q_i = \alpha z + \sigma_q e_i$, $k_i = {k}$, $\tilde k_i = {kt}$; "
            r"{latents} independent standard Gaussians.")
    return (
        LatentLinearModel(
            name="row-factor", title="a factor z common to the query and all its keys",
            dimension=d, parameter_points=_points(sigma_q, sigma_k, alpha, beta, mu_k),
            latents=(Latent("z", NORMAL, shared=True), Latent("e", NORMAL), Latent("f", NORMAL),
                     Latent("g", NORMAL)),
            loadings={q: {"z": alpha, "e": sigma_q}, k: {"z": beta, "f": sigma_k},
                      ktilde: {"z": beta, "g": sigma_k}},
            means={k: mu_k, ktilde: mu_k},
            description=(keys.format(k=r"\mu_k + \beta z + \sigma_k f_i",
                                     kt=r"\mu_k + \beta z + \sigma_k g_i",
                                     latents=r"$z, e_i, f_i, g_i$"),
                         r"The factor $z$ and the key mean $\mu_k$ are common to the row.")),
        LatentLinearModel(
            name="key-factors", title="a factor of its own for the query and for each key",
            dimension=d, parameter_points=_points(sigma_q, sigma_k, alpha, beta),
            latents=(Latent("z", NORMAL, shared=True), Latent("z1", NORMAL, shared=True),
                     Latent("z2", NORMAL, shared=True), Latent("e", NORMAL),
                     Latent("f", NORMAL), Latent("g", NORMAL)),
            loadings={q: {"z": alpha, "e": sigma_q}, k: {"z1": beta, "f": sigma_k},
                      ktilde: {"z2": beta, "g": sigma_k}},
            description=(keys.format(k=r"\beta z_1 + \sigma_k f_i",
                                     kt=r"\beta z_2 + \sigma_k g_i",
                                     latents=r"$z, z_1, z_2, e_i, f_i, g_i$"),
                         r"Each key has a factor of its own.")),
        LatentLinearModel(
            name="aligned-key", title="one key aligned with the query, the other independent",
            dimension=d, parameter_points=_points(sigma_q, sigma_k, rho),
            latents=(Latent("u", NORMAL), Latent("w", NORMAL), Latent("v", NORMAL)),
            loadings={q: {"u": sigma_q},
                      k: {"u": rho * sigma_k, "w": sp.sqrt(1 - rho**2) * sigma_k},
                      ktilde: {"v": sigma_k}},
            description=(r"The pairs $(q_i, k_i)$ are jointly Gaussian with mean $0$, variances "
                         r"$\sigma_q^2, \sigma_k^2$ and correlation $\rho$ (the key the query "
                         r"looks for); $\tilde k_i \sim \mathcal{N}(0, \sigma_k^2)$ is "
                         r"independent of both (another key of the row); the $d$ coordinates "
                         r"are independent.",)),
    )


sigma_w = sp.Symbol("sigma_w", positive=True)  # the sd of each weight entry at initialisation
#: a token's embeddings x (for the query) and y (for the key), in R^3: fixed vectors
x = sp.symbols("x_1:4", real=True)
y = sp.symbols("y_1:4", real=True)
TOKENS = [
    {sigma_w: Rational(2, 3), **dict(zip(x, (Rational(1, 2), Rational(-3, 4), Rational(5, 3)))),
     **dict(zip(y, (Rational(-2, 5), Rational(7, 6), Rational(1, 4))))},
    {sigma_w: Rational(9, 7), **dict(zip(x, (Rational(-5, 4), Rational(1, 3), Rational(2, 7)))),
     **dict(zip(y, (Rational(3, 5), Rational(-1, 2), Rational(-4, 3))))},
]


def initialisation(family: Family, same_token: bool = False) -> LatentLinearModel:
    """q = W_Q x and k = W_K y for fixed x, y in R^3 and independent weight matrices whose
    entries are i.i.d. family(sigma_w): q_i = sum_a W_Q[i, a] x_a, one latent per entry (the
    entries of row i are latents local to coordinate i)."""
    keys = x if same_token else y
    points = [{s_: v for s_, v in point.items() if s_ is sigma_w or s_ in x or s_ in keys}
              for point in TOKENS]
    token = "the same token, $x = y$" if same_token else "tokens $x, y \\in \\mathbb{R}^3$"
    return LatentLinearModel(
        name=f"init-{'same-token-' if same_token else ''}{family.name.lower()}",
        title=f"q = W_Q x, k = W_K {'x' if same_token else 'y'} at initialisation, "
              f"{family.name} weights",
        dimension=d, parameter_points=points,
        latents=tuple(Latent(f"{m}{a}", family) for m in "WV" for a in range(1, 4)),
        loadings={q: {f"W{a}": sigma_w * x[a - 1] for a in range(1, 4)},
                  k: {f"V{a}": sigma_w * keys[a - 1] for a in range(1, 4)}},
        description=(rf"$q = W_Q x$, $k = W_K {'x' if same_token else 'y'}$ for {token}; the "
                     rf"entries of $W_Q$ and $W_K$ are independent, "
                     rf"${_law(family, sigma_w)}$.",))


def gaussian_logits() -> LatentLinearModel:
    """n i.i.d. N(0, s^2) logits z_1..z_n (for softmax statements)."""
    return LatentLinearModel(
        name="gaussian-logits", title="n i.i.d. Gaussian logits", dimension=n,
        parameter_points=[{s: Rational(3, 5)}, {s: Rational(7, 4)}],
        latents=(Latent("u", NORMAL),), loadings={z: {"u": s}},
        description=(r"The logits $z_1, \dots, z_n$ are independent $\mathcal{N}(0, s^2)$.",))


logit_range = sp.Symbol("R", positive=True)  # bounded logits lie in [0, R]


def uniform_logits() -> LatentLinearModel:
    """n i.i.d. logits uniform on [0, R]: z = R/2 + R/(2 sqrt 3) u for a standardised uniform
    u, so max z - min z <= R (for statements about logits of bounded range)."""
    return LatentLinearModel(
        name="uniform-logits", title="n i.i.d. logits uniform on [0, R]", dimension=n,
        parameter_points=[{logit_range: sp.Integer(2)}, {logit_range: Rational(9, 2)}],
        latents=(Latent("u", UNIFORM),),
        loadings={z: {"u": logit_range / (2 * sp.sqrt(3))}}, means={z: logit_range / 2},
        description=(r"The logits $z_1, \dots, z_n$ are independent and uniform on $[0, R]$, "
                     r"so that $\max_i z_i - \min_i z_i \le R$.",))


def gaussian(with_means: bool = False, independent_keys: bool = False,
             given_query: bool = False) -> GaussianMatrixModel:
    """Jointly Gaussian q, k with general covariance blocks (and means); with
    ``independent_keys`` a key of the query's row, independent of it (Sigma_qk = 0), and with
    ``given_query`` also the query held at a value u."""
    if given_query:
        name, title = "gaussian-row-given-query", "a Gaussian key given its query q = u " \
                                                  "(keys independent of the query)"
    elif independent_keys:
        name, title = "gaussian-row", "a Gaussian query and an independent Gaussian key, " \
                                      "general covariances and means"
    else:
        name = "gaussian-means" if with_means else "gaussian"
        title = "jointly Gaussian, general covariance" + (" and means" if with_means else "")
    return GaussianMatrixModel(
        name=name, title=title, dimension=d,
        parameter_points=[{covariance_pattern: sp.Integer(0)},
                          {covariance_pattern: sp.Integer(1)}],
        with_means=with_means, independent_keys=independent_keys, given_query=given_query)


INDEPENDENT = tuple(independent(family) for family in FAMILIES)
DEPENDENT = tuple(aligned(family) for family in FAMILIES) + (
    correlated(), correlated(with_means=True), shared_factor(same_factor=True),
    shared_factor(same_factor=False), gaussian(), gaussian(with_means=True))
LOGITS = (gaussian_logits(), uniform_logits())
ROWS = row_models() + (gaussian(with_means=True, independent_keys=True),
                       gaussian(with_means=True, independent_keys=True, given_query=True))
INITIALISATION = tuple(initialisation(family, same) for same in (False, True)
                       for family in FAMILIES)
MODELS = {model.name: model
          for model in INDEPENDENT + DEPENDENT + LOGITS + ROWS + INITIALISATION}


def get_model(name: str) -> Model:
    try:
        return MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


def resolve_models(items) -> list[Model]:
    """Models given by name or as objects."""
    return [item if isinstance(item, Model) else get_model(item) for item in items]


def without_numbers_in_step(model: Model, *exprs: Expr) -> tuple[list, dict, Model]:
    """The expressions, and the model, with each number that is not a rational as an unknown
    of its proven sign (``algebra.without_numbers``), and the map back: the rules and the
    moment engine expand, and SymPy's expand and constructors rewrite numbers by evalf (the
    factor d^u of E[2 d^u q_i^2], u = sin(log(2 cos(10^-50)) - log 2), was dropped as 1 by
    linearity; review round 48)."""
    constants = model.constants
    plain, numbers = without_numbers(*exprs, *constants)
    return plain[:len(exprs)], numbers, model.with_constants(plain[len(exprs):])
