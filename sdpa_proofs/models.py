"""Probability models for the random vectors of a derivation.

A model answers three kinds of question, one per checker:
- symbolic: exact joint moments of coordinates, its means and variances, which coordinates are
  independent (the preconditions of the rules);
- numerical: integrate a function of the coordinates against the model's joint density;
- Monte Carlo: draw samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import mpmath
import numpy as np
import sympy as sp
from sympy import Expr, Indexed, Rational, Symbol

from .distributions import FAMILIES, RADEMACHER, UNIFORM, Family
from .expressions import RandomVector
from .symbols import d, k, q, sigma_k, sigma_q
from .text import show


def indices_known_distinct(a, b, distinct: frozenset) -> bool:
    if a.is_Integer and b.is_Integer:
        return a != b
    return frozenset((a, b)) in distinct


@dataclass(eq=False)
class Model:
    """Base class: subclasses fill in the moments, the independence structure and the sampler."""

    name: str
    title: str
    dimension: Symbol
    parameter_points: list[dict] = field(default_factory=list)

    @property
    def vectors(self) -> tuple[RandomVector, ...]:
        raise NotImplementedError

    def assumptions(self) -> list[str]:
        """The model's assumptions as LaTeX sentences."""
        raise NotImplementedError

    def mean(self, vector: RandomVector) -> Expr:
        raise NotImplementedError

    def variance(self, vector: RandomVector) -> Expr:
        raise NotImplementedError

    def joint_moment(self, blocks: list[dict]) -> Expr:
        """E[prod over blocks prod_v v_b^power] for pairwise distinct coordinates b."""
        raise NotImplementedError

    def dependence(self, a: Indexed, b: Indexed, distinct: frozenset) -> str | None:
        """None when coordinates a and b are independent, else why they may not be."""
        raise NotImplementedError

    def integrate(self, f, variables: list[Indexed], degrees: dict | None, point: dict,
                  dps: int) -> tuple:
        """(E[f], E[|f|]) for f a function of ``variables``, at parameter values ``point``;
        exact when ``degrees`` (the degree of f in each variable) is given."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, n: int, dim: int, point: dict) -> dict:
        """n draws of every vector at dimension ``dim``: vector -> array of shape (n, dim)."""
        raise NotImplementedError


def _maybe_equal(a: Indexed, b: Indexed) -> str:
    (ia,), (ib,) = a.indices, b.indices
    return f"{show(a)} and {show(b)} may be the same coordinate: {ia} ≠ {ib} is not known here"


def mp_value(x) -> mpmath.mpf:
    """A parameter value at the working precision (exactly, for a rational)."""
    x = sp.sympify(x)
    if isinstance(x, Rational):
        return mpmath.mpf(int(x.p)) / int(x.q)
    return mpmath.mpf(str(sp.N(x, mpmath.mp.dps + 10)))


@dataclass(eq=False)
class IndependentModel(Model):
    """All coordinates of all vectors mutually independent with mean 0; v_i ~ family(sigma_v)."""

    laws: dict = field(default_factory=dict)  # RandomVector -> (Family, sigma symbol)

    @property
    def vectors(self):
        return tuple(self.laws)

    def assumptions(self):
        laws = ", ".join(rf"{v.label}_i \sim {family.latex.format(s=sp.latex(sigma))}"
                         for v, (family, sigma) in self.laws.items())
        names = ", ".join(f"{v.label}_i" for v in self.laws)
        return [rf"All coordinates ${names}$ ($1 \le i \le {sp.latex(self.dimension)}$) are "
                r"mutually independent with mean $0$.",
                rf"${laws}$."]

    def mean(self, vector):
        return sp.S.Zero

    def variance(self, vector):
        return self.laws[vector][1] ** 2

    def joint_moment(self, blocks):
        result = sp.S.One
        for block in blocks:
            for vector, power in block.items():
                family, sigma = self.laws[vector]
                result *= family.moment(power, sigma)
        return result

    def dependence(self, a, b, distinct):
        if a.base != b.base:
            return None
        (ia,), (ib,) = a.indices, b.indices
        if indices_known_distinct(ia, ib, distinct):
            return None
        return _maybe_equal(a, b)

    def integrate(self, f, variables, degrees, point, dps):
        rules = []
        for v in variables:
            family, sigma = self.laws[v.base]
            if degrees is None:
                raise ValueError("non-polynomial integrand")
            rules.append(family.rule(family.points_for_degree(degrees[v]),
                                     mp_value(point[sigma]), dps))
        return tensor_sum(f, rules)

    def sample(self, rng, n, dim, point):
        return {v: family.sample(rng, (n, dim), float(point[sigma]))
                for v, (family, sigma) in self.laws.items()}


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


@dataclass(eq=False)
class AlignedModel(Model):
    """k = (sigma_k / sigma_q) q: the key is a scaled copy of the query (correlation 1), with
    independent, zero-mean coordinates q_i ~ family(sigma_q).  The simplest non-Gaussian model in
    which q_i and k_i are dependent."""

    family: Family = None
    query: RandomVector = q
    key: RandomVector = k
    sigma_query: Symbol = sigma_q
    sigma_key: Symbol = sigma_k

    @property
    def vectors(self):
        return (self.query, self.key)

    @property
    def ratio(self) -> Expr:
        return self.sigma_key / self.sigma_query

    def assumptions(self):
        family = self.family.latex.format(s=sp.latex(self.sigma_query))
        return [rf"The coordinates $q_i \sim {family}$ are independent with mean $0$, and "
                rf"$k = ({sp.latex(self.ratio)})\, q$: each $k_i$ is a multiple of $q_i$."]

    def mean(self, vector):
        return sp.S.Zero

    def variance(self, vector):
        return (self.sigma_query if vector == self.query else self.sigma_key) ** 2

    def joint_moment(self, blocks):
        result = sp.S.One
        for block in blocks:
            a, b = block.get(self.query, 0), block.get(self.key, 0)
            result *= self.ratio ** b * self.family.moment(a + b, self.sigma_query)
        return result

    def dependence(self, a, b, distinct):
        (ia,), (ib,) = a.indices, b.indices
        if indices_known_distinct(ia, ib, distinct):
            return None
        if a.base != b.base:
            return f"{show(b)} and {show(a)} are dependent in this model: k is a multiple of q"
        return _maybe_equal(a, b)

    def integrate(self, f, variables, degrees, point, dps):
        if degrees is None:
            raise ValueError("non-polynomial integrand")
        coordinates = sorted({v.indices[0] for v in variables}, key=sp.default_sort_key)
        ratio = mp_value(self.ratio.xreplace(point))
        sigma = mp_value(point[self.sigma_query])
        rules = []
        for index in coordinates:
            degree = sum(degrees.get(vector[index], 0) for vector in self.vectors)
            rules.append(self.family.rule(self.family.points_for_degree(degree), sigma, dps))
        position = {index: n for n, index in enumerate(coordinates)}

        def on_grid(*values):
            return f(*(values[position[v.indices[0]]] * (ratio if v.base == self.key else 1)
                       for v in variables))

        return tensor_sum(on_grid, rules)

    def sample(self, rng, n, dim, point):
        queries = self.family.sample(rng, (n, dim), float(point[self.sigma_query]))
        return {self.query: queries, self.key: queries * float(self.ratio.xreplace(point))}


PARAMETER_POINTS = [{sigma_q: Rational(3, 7), sigma_k: Rational(5, 4)},
                    {sigma_q: Rational(11, 5), sigma_k: Rational(2, 9)}]


def independent(family: Family) -> IndependentModel:
    return IndependentModel(
        name=f"independent-{family.name.lower()}",
        title=f"independent {family.name} coordinates",
        dimension=d, parameter_points=PARAMETER_POINTS,
        laws={q: (family, sigma_q), k: (family, sigma_k)})


def aligned(family: Family) -> AlignedModel:
    return AlignedModel(name=f"aligned-{family.name.lower()}",
                        title=f"k a multiple of q, {family.name} coordinates", dimension=d,
                        parameter_points=PARAMETER_POINTS, family=family)


INDEPENDENT = tuple(independent(family) for family in FAMILIES)
DEPENDENT = (aligned(UNIFORM), aligned(RADEMACHER))
MODELS = {model.name: model for model in INDEPENDENT + DEPENDENT}


def get_model(name: str) -> Model:
    try:
        return MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None
