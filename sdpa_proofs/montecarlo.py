"""Monte Carlo backing for a claim at large d: sample, estimate the left side, compare.

The left side's moments are estimated in independent batches; the spread of the batch estimates
gives the standard error, so any combination of E, Var and sd gets an honest interval.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from functools import lru_cache

import numpy as np
import sympy as sp
from sympy import Eq, Expr

from .batches import (
    BATCHES,
    MAX_BEND,
    MIN_EFFECTIVE_SAMPLES,
    T_95,
    TOLERANCE_SE,
    batch_statistic,
    compare,
    effective_samples,
    estimate_range,
    finite_over,
    moved_by_rounding,
    not_judged,
    pooled,
    rounding_of,
    standard_error,
)
from .calculus import calculus_normal_form
from .concrete import arbitrary_values
from .distributions import random_stream
from .expressions import (
    SD,
    Var,
    index_symbols,
    is_random_coordinate,
    moment_atoms,
    pole,
    random_coordinates,
)
from .limits import Lim
from .models import Model
from .realnumbers import MisjudgedNumber, NoEnclosure, nearest_double, put_in
from .samplevalues import (
    UnsupportedForSampling,
    as_samples,
    refuse_unresolved,
    values_and_sizes,
    vector_values,
)
from .supports import Corners, Draws, bounded_latents, corner_counts
from .text import show
from .verdicts import NOT_APPLICABLE, MonteCarloResult

DIMENSIONS = (64, 512, 4096)


def samples_for(dim: int, budget: float = 1.6e7) -> int:
    """Sample size for dimension ``dim``: about ``budget`` coordinates per vector in all."""
    return int(min(200_000, max(4_000, budget // dim)) // BATCHES * BATCHES)



def draw_samples(model: Model, dim: int, point: dict, n: int, seed: int) -> dict:
    """n seeded draws of the model's vectors at dimension ``dim``, cached for the next claim."""
    return _draw(model, dim, tuple(sorted(point.items(), key=str)), n, seed)


@lru_cache(maxsize=len(DIMENSIONS))  # one model's samples at a time
def _draw(model: Model, dim: int, point_key: tuple, n: int, seed: int) -> dict:
    rng = random_stream(seed, dim)
    return model.sample(rng, n, dim, dict(point_key))


def check_claim(claim: Eq, model: Model, dims=DIMENSIONS, seed: int = 2026,
                budget: float = 1.6e7) -> list[MonteCarloResult]:
    """Estimate both sides of the claim at each d from the same samples, batch by batch; the
    claim fails when the mean difference is more than TOLERANCE_SE standard errors from 0."""
    return check_claims([(claim, model)], dims, seed, budget)[0]


def check_claims(claims: list[tuple[Eq, Model]], dims=DIMENSIONS, seed: int = 2026,
                 budget: float = 1.6e7) -> list[list[MonteCarloResult]]:
    """``check_claim`` for each (claim, model), all from one stream of draws.  The samples are
    drawn in chunks of CHUNK_COORDINATES coordinates, and each chunk serves every claim at
    every d before the next is drawn: the arrays stay small enough to be reused instead of
    touched anew.  Models built from the same standardised latents (a Gaussian u, w, ...)
    share them, each model's own latents being independent of each other, and a chunk's
    per-coordinate draws serve each d in the shape (rows, d): the estimates at different d
    share random numbers, each from samples independent among themselves, as one d's check
    needs.  A model whose sampler fails fails its own claims only.  Each size in ``dims`` is
    sampled once, the smallest first (a limit's distance must shrink towards the largest)."""
    dims = tuple(sorted(set(dims)))
    plans = _in_order(claims, lambda pair: _plan(*pair, seed, dims),
                      key=lambda pair: id(pair[1]))
    models = list({id(model): model for _, model in claims}.values())
    sizes = {dim: samples_for(dim, budget) for dim in dims}
    rows = {dim: max(1, CHUNK_COORDINATES // dim) for dim in dims}
    started = {dim: [plan for plan in plans if isinstance(plan, _Plan)
                     and plan.start(dim, sizes[dim])] for dim in dims}
    chunks = max((-(-sizes[dim] // rows[dim]) for dim in dims if started[dim]), default=0)
    for chunk in range(chunks):
        shared: dict = {}  # the chunk's per-coordinate draws, for every d
        for dim in dims:
            first = chunk * rows[dim]
            if first >= sizes[dim]:
                continue
            source = _Draws((seed, dim, chunk), shared)
            count = min(rows[dim], sizes[dim] - first)
            for model in models:
                mine = [plan for plan in started[dim] if plan.model is model and not plan.done]
                if mine:
                    _add_chunk(mine, model, source, count, dim, slice(first, first + count))
    for dim in dims:
        for plan in started[dim]:
            plan.finish(dim)
    return [plan.results if isinstance(plan, _Plan) else plan for plan in plans]


def _in_order(items: list, work, key) -> list:
    """``[work(item) for item in items]``, worked in the order of ``key``: the pointwise
    checks of one model one after another, so that its samples, drawn whole, are drawn once
    for all of them (draw_samples keeps one model's)."""
    done = {}
    for n in sorted(range(len(items)), key=lambda n: key(items[n])):
        done[n] = work(items[n])
    return [done[n] for n in range(len(items))]


def _add_chunk(plans: list[_Plan], model: Model, source: _Draws, rows: int, dim: int,
               where: slice) -> None:
    try:
        arrays = _vectors(model, source, rows, dim)
    except UnsupportedForSampling as error:
        for plan in plans:
            plan.stop(NOT_APPLICABLE, f"not sampled: {error}", dim)
        return
    computed: dict = {}  # claims under one model share their moments' arguments and their
    # parts (S in S, S/d, S^2): vector_values' memo, and which arguments are weighed
    for plan in plans:
        plan.add(dim, arrays, where, computed)


def _vectors(model: Model, source: _Draws, rows: int, dim: int) -> dict:
    """The model's vectors at dimension ``dim`` from the chunk's draws.  A model that builds
    each coordinate from the draws at that coordinate alone is built once per chunk, on the
    chunk's per-coordinate draws laid out flat, and each d reads the same numbers in its own
    shape: what building it at every d would give, once."""
    point = model.parameter_points[0]
    if not (model.coordinatewise and dim > 1 and rows * dim <= CHUNK_COORDINATES):
        return model.sample_from(source, rows, dim, point)
    key = ("vectors", id(model))
    if key not in source.shared:
        source.shared[key] = model.sample_from(source, 1, CHUNK_COORDINATES, point)
    return {vector: values.reshape(-1)[:rows * dim].reshape(rows, dim)
            for vector, values in source.shared[key].items()}


class _Draws(Draws):
    """Standardised draws for one chunk at one d, each (family, slot, shape) drawn once and
    shared by the models that ask for it; every stream seeded by what it is for.  Draws of one
    per coordinate are taken from CHUNK_COORDINATES numbers per (family, slot) that the
    chunk's d share (``shared``), each d reading them in its own shape.  Models that combine
    the same draws with the same numbers share the result (the init models' queries, a
    query of 3/7 u in five models)."""

    def __init__(self, key: tuple, shared: dict | None = None):
        self.key, self.kept, self.combinations = key, {}, {}
        self.shared = {} if shared is None else shared

    def standard(self, family, slot: int, shape: tuple) -> np.ndarray:
        wanted = (family.name, slot, shape)
        if wanted not in self.kept:  # one object per draw: ``combined`` knows it by its id
            self.kept[wanted] = self._drawn(family, slot, shape)
        return self.kept[wanted]

    def _drawn(self, family, slot: int, shape: tuple) -> np.ndarray:
        size = int(np.prod(shape))
        if shape[1] > 1 and size <= CHUNK_COORDINATES:
            wanted = (family.name, slot)
            if wanted not in self.shared:
                seed, _, chunk = self.key
                rng = random_stream(seed, chunk, slot, zlib.crc32(family.name.encode()),
                                    PER_COORDINATE)
                draws = family.sample(rng, (CHUNK_COORDINATES,), 1.0)
                draws.flags.writeable = False  # read by every model and d of the chunk
                self.shared[wanted] = draws
            return self.shared[wanted][:size].reshape(shape)
        rng = random_stream(*self.key, slot, zlib.crc32(family.name.encode()), *shape[1:])
        return family.sample(rng, shape, 1.0)

    def combined(self, terms, mean, shape):
        """``Draws.combined``, once per chunk for the same arrays and numbers.  The entry holds
        the terms' arrays, so that no other array can take one's id while it is kept."""
        key = (tuple((id(x), c) for x, c in terms), mean, shape)
        if key not in self.combinations:
            self.combinations[key] = terms, super().combined(terms, mean, shape)
        return self.combinations[key][1]

    def generator(self, name: str) -> np.random.Generator:
        return random_stream(*self.key, OWN_STREAM, zlib.crc32(name.encode()))


OWN_STREAM = 2**31  # no slot of a shared draw is this large
PER_COORDINATE = 2**31 + 1  # the stream of a chunk's per-coordinate draws
# per vector and chunk: 2 MiB of doubles.  Each chunk costs every claim a pass of Python over
# its expression; 2**17 and 2**19 were slower, the second from the cache's size.
CHUNK_COORDINATES = 2**18


def _plan(claim: Eq, model: Model, seed: int, dims) -> _Plan | list[MonteCarloResult]:
    """What sampling a claim needs, or its results when it needs no moment estimates."""
    try:
        return _planned(claim, model, seed, dims)
    except UnsupportedForSampling as error:
        return [MonteCarloResult(0, 0, *[float("nan")] * 4, NOT_APPLICABLE,
                                 f"not sampled: {error}")]


def _put_in(expr: Expr, values: dict) -> Expr:
    """realnumbers.put_in: values put in that make a number SymPy misjudges leave the claim
    not sampled."""
    try:
        return put_in(expr, values)
    except MisjudgedNumber as error:
        raise UnsupportedForSampling(str(error)) from error


def _planned(claim: Eq, model: Model, seed: int, dims) -> _Plan | list[MonteCarloResult]:
    claim = _with_arbitrary_values(claim, model)
    if claim.lhs.has(Lim) or claim.rhs.has(Lim):
        return limit_plan(claim, model, dims)
    atoms = sorted(moment_atoms(claim.lhs) | moment_atoms(claim.rhs), key=sp.default_sort_key)
    if random_coordinates(claim.lhs) | random_coordinates(claim.rhs):
        return check_pointwise(claim, model, dims, seed)
    if not atoms:
        return []  # nothing random to estimate, on either side
    poles = [f"{atom}: {why}" for atom in atoms for why in map(pole, atom.args) if why]
    if poles:  # batch means of 1/q spread like Cauchy variables, around no mean at all
        return [MonteCarloResult(0, 0, *[float("nan")] * 4, NOT_APPLICABLE,
                                 f"not sampled: {poles[0]}: the moment may not exist")]
    entries = sorted((x for x in claim.atoms(sp.Indexed) if not is_random_coordinate(x)),
                     key=sp.default_sort_key)  # the same one named in every run
    if entries:  # e.g. tr Sigma_qk: a sum of matrix entries, not a closed form in d
        return [MonteCarloResult(0, 0, *[float("nan")] * 4, NOT_APPLICABLE,
                                 f"not sampled: the claim involves matrix entries such as "
                                 f"{entries[0]}")]
    return _Plan(claim, atoms, model)


class _Plan:
    """One claim's estimates under one model: the samples of each moment's arguments at each
    d, filled chunk by chunk, then batch statistics of both sides at each d."""

    def __init__(self, claim: Eq, atoms: list, model: Model):
        self.claim, self.atoms, self.model = claim, atoms, model
        point = model.parameter_points[0]
        self.stand_ins = [sp.Dummy(f"moment{n}") for n in range(len(atoms))]
        self.sides = [_put_in(side.xreplace(dict(zip(atoms, self.stand_ins))), point)
                      for side in (claim.lhs, claim.rhs)]
        self.results: list[MonteCarloResult] = []
        self.runs: dict = {}  # d -> (n, the atoms' arguments at d, their samples)
        self.terms: dict = {}  # d -> {argument: the largest size of its terms, first chunk}
        self.done = False

    def start(self, dim: int, n: int) -> bool:
        """Ready for the samples at dimension ``dim``; False once the claim is decided."""
        if self.done:
            return False
        concrete = {self.model.dimension: sp.Integer(dim), **self.model.parameter_points[0]}
        try:
            arguments = [[_put_in(x, concrete) for x in a.args] for a in self.atoms]
        except UnsupportedForSampling as error:
            self.stop(NOT_APPLICABLE, f"not sampled: {error}", dim)
            return False
        self.runs[dim] = (n, arguments, [[np.empty(n) for _ in a.args] for a in self.atoms])
        return True

    def stop(self, status: str, reason: str, dim: int = 0) -> None:
        self.results = [MonteCarloResult(dim, 0, *[float("nan")] * 4, status, reason)]
        self.done = True
        self.runs = {}

    def add(self, dim: int, arrays: dict, rows: slice, computed: dict) -> None:
        """The samples of the moments' arguments from one chunk of the model's ``arrays``;
        ``computed`` holds the arguments' samples from these arrays found so far.  The first
        chunk at each d is also weighed against the size of its terms: an argument that is
        rounding noise (10^20 log(1 + q^2 10^-20), 0 in double precision) is not sampled."""
        if self.done:
            return
        _, arguments, values = self.runs[dim]
        try:
            for argument, samples in zip(arguments, values):
                for x, column in zip(argument, samples):
                    if dim not in self.terms and ("terms", x) not in computed:
                        # the first chunk shows what rounding does
                        value, size = values_and_sizes(x, arrays, dim)
                        refuse_unresolved(value, size)
                        computed.setdefault((x, None), value)
                        computed["terms", x] = float(np.max(size, initial=0.0))
                    column[rows] = vector_values(x, arrays, dim, None, computed)
            if dim not in self.terms:
                self.terms[dim] = {x: computed["terms", x] for argument in arguments
                                   for x in argument}
        except UnsupportedForSampling as error:
            self.stop(NOT_APPLICABLE, f"not sampled: {error}", dim)

    def finish(self, dim: int) -> None:
        if self.done:
            return
        n, arguments, values = self.runs.pop(dim)
        roundings = [[rounding_of(x, self.terms[dim][x]) for x in argument]
                     for argument in arguments]
        self.results.append(replace(self._judged(dim, n, values, roundings),
                                    dimension=str(self.model.dimension)))

    def _judged(self, dim: int, n: int, values: list, roundings: list) -> MonteCarloResult:
        """The verdict at one d from the moments' samples, or n/a with the reason a batch
        spread would be no error bar there, or the sides lie within what rounding may have
        moved them (a constant S = d sigma_q sigma_k has a spread of rounding alone)."""
        effective = min((effective_samples(a, v) for a, v in zip(self.atoms, values)),
                        key=lambda pair: pair[0])
        if effective[0] < MIN_EFFECTIVE_SAMPLES:
            return not_judged(dim, n, f"the samples of {show(effective[1])} are dominated by a "
                                       f"few draws (effective sample size {effective[0]:.0f} of "
                                       f"{n}): heavy tails or a spread of rounding alone, "
                                       "where a standard error means nothing")
        try:
            statistics = {stand_in: np.array([batch_statistic(a, v, slice(b, None, BATCHES))
                                              for b in range(BATCHES)])
                          for stand_in, a, v in zip(self.stand_ins, self.atoms, values)}
            (lhs, lhs_terms), (rhs, rhs_terms) = (self._side(side, statistics, dim)
                                                  for side in self.sides)
        except UnsupportedForSampling as error:
            return not_judged(dim, n, str(error))
        bent = self._bend(lhs - rhs, statistics, dim)
        if bent:
            return not_judged(dim, n, bent)
        verdict = compare(dim, n, lhs, rhs, self.claim.rel_op)
        if verdict.status != "fail" or self.claim.rel_op in ("<", ">"):
            return verdict  # strictly apart is more than rounding can show (see compare)
        moved = [moved_by_rounding(a, v, r) for a, v, r in zip(self.atoms, values, roundings)]
        sides = [_put_in(side, {self.model.dimension: sp.Integer(dim)}) for side in self.sides]
        reach = self._rounding_reach(lhs - rhs, statistics, moved, dim) + sum(
            rounding_of(side, float(np.mean(terms)))
            for side, terms in zip(sides, (lhs_terms, rhs_terms)))
        off = abs(float(np.mean(lhs - rhs)))
        if off > TOLERANCE_SE * standard_error(lhs - rhs) + reach:
            return verdict
        return not_judged(dim, n, f"the sides differ by {off:.3g}, within what rounding may "
                                  f"move them ({reach:.3g}: each operation of the samples and "
                                  "the formula rounded by a unit roundoff of its terms, twice "
                                  "over): double precision cannot tell them apart")

    def _rounding_reach(self, differences: np.ndarray, statistics: dict, moved: list,
                        dim: int) -> float:
        """How far the mean difference of the sides moves when each moment's batch estimates
        move by what rounding may have moved them, one moment at a time, either way (a
        variance not below 0); infinite where a moved estimate leaves the formula's domain."""
        base, reaches = float(np.mean(differences)), []
        for (stand_in, batches), atom, by in zip(statistics.items(), self.atoms, moved):
            for shift in (by, -by):
                shifted = batches + shift
                if isinstance(atom, (Var, SD)):
                    shifted = np.maximum(shifted, 0.0)
                try:
                    lhs, rhs = (self._side(side, {**statistics, stand_in: shifted}, dim)[0]
                                for side in self.sides)
                except UnsupportedForSampling:
                    return float("inf")
                reaches.append(abs(float(np.mean(lhs - rhs)) - base))
        return 2 * sum(reaches)  # both ways of every moment, added: a margin over the larger

    def _bend(self, differences: np.ndarray, statistics: dict, dim: int) -> str:
        """Why the batches' mean of f(estimates) is no estimate of f(moments), or "": it is
        only where f is nearly linear over the estimates' spread.  At a kink or a stationary
        point (E[q]^2 at E[q] = 0) the mean over batches is off by about the batches' spread
        squared, more than its standard error, and the test centres on the wrong value.  The
        difference between that mean and f at the pooled estimates measures the bend; it must
        stay below half a standard error (on the catalogue it is below 1%)."""
        at_pooled = {stand_in: np.full(BATCHES, pooled(atom, batches))
                     for (stand_in, batches), atom in zip(statistics.items(), self.atoms)}
        try:
            (lhs, lhs_terms), (rhs, rhs_terms) = ((values[0], sizes[0]) for values, sizes in
                                                  (self._side(side, at_pooled, dim)
                                                   for side in self.sides))
        except UnsupportedForSampling as error:
            return str(error)
        bias, error = float(differences.mean()) - (lhs - rhs), standard_error(differences)
        # the values' own, however small, and their terms' (Var(S) = 0 of a constant S)
        rounding = 1e-12 * max(abs(lhs), abs(rhs), lhs_terms, rhs_terms)
        if abs(bias) <= MAX_BEND * error + rounding:
            return ""
        return (f"the claim's formula bends over the spread of the moments' batch estimates "
                f"(a bias of {abs(bias):.3g} against a standard error of {error:.3g}): the "
                "batch spread is no error bar")

    def _side(self, side: Expr, statistics: dict, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """A side at each batch's estimates, and the size of its terms there, in doubles whose
        rounding is weighed: the formula around the moments may cancel (10^17 e^(E[q^2]
        10^-17) - 10^17).  Near a pole, f(batch estimate) spreads like a Cauchy variable and
        no spread of the batches is a standard error: the formula must stay finite and real
        wherever the estimates may fall (1 / (E[q] + 10^-3) = 0 passed)."""
        side = _put_in(side, {self.model.dimension: sp.Integer(dim)})
        boxes = {stand_in: estimate_range(values, isinstance(atom, (Var, SD)))
                 for stand_in, atom, values in zip(self.stand_ins, self.atoms,
                                                   statistics.values())}
        if not finite_over(side, boxes):
            raise UnsupportedForSampling(f"{show(side)} has a pole or leaves the reals where the "
                                         "moments' batch estimates fall")
        values, sizes = (as_samples(x, BATCHES) for x in values_and_sizes(
            side, statistics, dim))
        refuse_unresolved(values, sizes)
        return values, sizes




def _with_arbitrary_values(claim: Eq, model: Model) -> Eq:
    """The claim with seeded values for the symbols that neither the model nor the dimension
    fixes (the claim is about every value of them), so that it can be sampled at all."""
    fixed = {model.dimension} | set(model.parameter_points[0]) | \
        index_symbols(claim.lhs) | index_symbols(claim.rhs)
    values = {s: v for s, v in arbitrary_values([claim.lhs, claim.rhs]).items() if s not in fixed}
    return claim.func(_put_in(claim.lhs, values), _put_in(claim.rhs, values), evaluate=False)


POINTWISE_SAMPLES = 2000
ROW_BLOCK = 2**20  # coordinates: 8 MiB an array (see _row_blocks)
# in double precision, with a margin of 1e-9 of the size of the terms (m, at most 1, see
# _where_it_fails): never a fixed 1, under which 10^-40 z^2 = 2 10^-40 z^2 held everywhere
_HOLDS = {"==": lambda a, b, m: np.abs(a - b) <= 1e-9 * m,
          "<=": lambda a, b, m: a <= b + 1e-9 * m,
          ">=": lambda a, b, m: a >= b - 1e-9 * m,
          # strictly: by more than rounding can explain ((3/7)^2 < 9/49 in doubles)
          "<": lambda a, b, m: a < b - 1e-9 * m, ">": lambda a, b, m: a > b + 1e-9 * m}


def limit_plan(claim: Eq, model: Model, dims=DIMENSIONS) -> _LimitPlan | list[MonteCarloResult]:
    """A claim lim_n X_n = L (almost surely): X_n sampled at each size in ``dims``, chunk by
    chunk beside the other claims.  Only lim X_n = (a closed form) is sampled."""
    limit, target = claim.lhs, claim.rhs
    if isinstance(target, Lim) and not isinstance(limit, Lim):  # L = lim X_n, read as written
        limit, target = target, limit
    point = model.parameter_points[0]
    if not isinstance(limit, Lim) or claim.rel_op != "==" or target.has(Lim) \
            or not _put_in(target, point).is_number:
        return [MonteCarloResult(0, 0, *[float("nan")] * 4, NOT_APPLICABLE,
                                 "not sampled: only lim X_n = (a closed form) is sampled")]
    try:
        goal = nearest_double(_put_in(target, point))  # proven: evalf may lose every digit
    except NoEnclosure as error:
        raise UnsupportedForSampling(str(error)) from error
    return _LimitPlan(limit.body, goal, model, dims)


class _LimitPlan(_Plan):
    """One limit claim's samples of X_n at each size, filled chunk by chunk (to check_claims, a
    plan like a moment's: started, added to and finished at each size, stopped as _Plan is);
    once the largest size is in, the verdict.  The mean distance E|X_n - L| must shrink, at
    the largest size to at most half of what it is at the smallest (a limit with fluctuations
    of order 1/sqrt(n) shrinks it by sqrt(64) over 64..4096), whereas a wrong L leaves it near
    |lim X_n - L|."""

    def __init__(self, body: Expr, goal: float, model: Model, dims):
        self.body, self.goal, self.model, self.dims = body, goal, model, tuple(dims)
        self.results: list[MonteCarloResult] = []
        self.runs: dict = {}  # d -> (X_n at d, its samples)
        self.distances: list[float] = []
        self.done = False

    def start(self, dim: int, n: int) -> bool:
        if self.done:
            return False
        point = self.model.parameter_points[0]
        try:
            body = _put_in(self.body, {self.model.dimension: sp.Integer(dim), **point})
        except UnsupportedForSampling as error:
            self.stop(NOT_APPLICABLE, f"not sampled: {error}", dim)
            return False
        self.runs[dim] = (body, np.empty(n))
        return True

    def add(self, dim: int, arrays: dict, rows: slice, computed: dict) -> None:
        """X_n at one chunk's rows; rounding, overflow and underflow are weighed on the first
        chunk's, as a moment's arguments are (sizing all 16 million coordinates tripled the
        limits' time)."""
        if self.done:
            return
        body, samples = self.runs[dim]
        try:
            if not rows.start:
                refuse_unresolved(*values_and_sizes(body, arrays, dim))
            samples[rows] = vector_values(body, arrays, dim, None, computed)
        except UnsupportedForSampling as error:
            self.stop(NOT_APPLICABLE, f"not sampled: {error}", dim)

    def finish(self, dim: int) -> None:
        if self.done:
            return
        _, values = self.runs.pop(dim)
        try:
            refuse_unresolved(values, np.abs(values))
        except UnsupportedForSampling as error:
            self.stop(NOT_APPLICABLE, f"not sampled: {error}", dim)
            return
        n = len(values)
        self.distances.append(float(np.mean(np.abs(values - self.goal))))
        spread = float(values.std(ddof=1) / np.sqrt(n))
        mean = float(values.mean())
        self.results.append(MonteCarloResult(dim, n, mean, mean - T_95 * spread,
                                             mean + T_95 * spread, self.goal, "pass", "",
                                             str(self.model.dimension)))
        if dim == self.dims[-1]:
            self._judge()

    def _judge(self) -> None:
        """At the largest size the estimate must reach the claim within its error, allowing
        for a bias no larger than how far the estimate moved over the last step (from the
        first size, 10^16 e^(-200 X) moving from 10^5 to 1.5 allowed any limit from 0 to
        100)."""
        distances, results, goal, dims = self.distances, self.results, self.goal, self.dims
        shrinks = distances[-1] <= distances[0] / 2 or distances[-1] <= 1e-9 * (1 + abs(goal))
        before, last = results[max(0, len(results) - 2)], results[-1]
        error = (last.ci_high - last.ci_low) / (2 * T_95)
        reaches = abs(last.estimate - goal) <= TOLERANCE_SE * error + abs(last.estimate -
                                                                         before.estimate)
        verdict = (f"E|X_n - L| is {distances[0]:.3g} at {self.model.dimension} = {dims[0]} "
                   f"and {distances[-1]:.3g} at {self.model.dimension} = {dims[-1]}; the "
                   f"estimate at {dims[-1]} is {last.estimate:.6g} against the claimed "
                   f"{goal:.6g}")
        ok = shrinks and reaches
        self.results = [replace(r, status="pass" if ok else "fail",
                                reason="" if ok else verdict + ": it does not converge to the "
                                "claimed limit") for r in results]


def about_generic_indices(indices) -> MonteCarloResult:
    """n/a for a statement about generic indices i, j (for i != j): no sample has a generic
    index, and a coordinate picked for it would make the statement about that one."""
    return MonteCarloResult(0, 0, *[float("nan")] * 4, NOT_APPLICABLE,
                            "not sampled: a statement about generic indices "
                            f"({', '.join(sorted(map(str, indices)))})")


def check_pointwise(claim: Eq, model: Model, dims=DIMENSIONS,
                    seed: int = 2026) -> list[MonteCarloResult]:
    """A claim about the coordinates themselves must hold at every point the model can
    produce: both sides at each of POINTWISE_SAMPLES draws (logits at the model's first point),
    and, for a model with bounded latents, at corners of its support (supports.Corners), in
    double precision with a relative margin of 1e-9; the first point where it fails is the
    counterexample.  Free indices (a statement about generic i, j) are not sampled."""
    free = sorted((x for x in index_symbols(claim.lhs) | index_symbols(claim.rhs)
                   if not x.is_Integer), key=str)  # q_1 is a coordinate, not a generic one
    if free:
        return [about_generic_indices(free)]
    point = model.parameter_points[0]
    # derivatives taken by SymPy for symbolic n (d/dz_i of a softmax), then sampled at each n
    sides = [calculus_normal_form(side, model.dimension, (claim.lhs, claim.rhs))
             if side.has(sp.Derivative) else side
             for side in (claim.lhs, claim.rhs)]
    results = []
    for dim in dims:
        concrete = [_put_in(side, {model.dimension: sp.Integer(dim), **point})
                    for side in sides]
        kinds = {"samples": draw_samples(model, dim, point, POINTWISE_SAMPLES, seed)}
        corners = _corners(model, dim, point, seed)
        if corners is not None:
            kinds["corners of the support"] = corners
        try:
            found = {kind: _where_it_fails(concrete, claim.rel_op, arrays, dim)
                     for kind, arrays in kinds.items()}
        except UnsupportedForSampling as error:
            return [MonteCarloResult(dim, 0, *[float("nan")] * 4, NOT_APPLICABLE,
                                     f"not sampled: {error}")]
        lhs, rhs = (np.concatenate(values) for values in zip(*(f[:2] for f in found.values())))
        reason = "; ".join(f"fails at {len(bad)} of {len(left)} {kind}; the first: "
                           f"{left[bad[0]]:.12g} {claim.rel_op} {right[bad[0]]:.12g} is false"
                           for kind, (left, right, bad) in found.items() if len(bad))
        results.append(MonteCarloResult(dim, len(lhs), float(lhs.mean()), float(lhs.min()),
                                        float(lhs.max()), float(rhs.mean()),
                                        "fail" if reason else "pass", reason,
                                        str(model.dimension)))
    return results


def _corners(model: Model, dim: int, point: dict, seed: int) -> dict | None:
    """The model's vectors at corners of its bounded latents (None when it has none): every
    count of coordinates at the top, then as many corners with random signs."""
    if not bounded_latents(model, point):
        return None
    return _corners_at(model, dim, tuple(sorted(point.items(), key=str)), seed)


@lru_cache(maxsize=len(DIMENSIONS))  # one model's corners at a time, as its samples
def _corners_at(model: Model, dim: int, point_key: tuple, seed: int) -> dict:
    corners = Corners(random_stream(seed, dim), corner_counts(dim))
    return model.sample_from(corners, 2 * len(corners.counts), dim, dict(point_key))


def _where_it_fails(sides: list, relation: str, arrays: dict, dim: int) -> tuple:
    """Both sides at every row of ``arrays``, and the rows where the relation fails."""
    known = _row_values(arrays)
    blocks = [_where_it_fails_in(sides, relation, block, dim, start,
                                 known.setdefault((start, rows), {}))
              for start, rows, block in _row_blocks(arrays, dim)]
    lhs, rhs, bad = (np.concatenate(parts) for parts in zip(*blocks))
    return lhs, rhs, bad


_ROW_VALUES: dict = {}  # id(arrays) -> (arrays, {a block's rows (first, count): values})


def _row_values(arrays: dict) -> dict:
    """The values and sizes of expressions with one number per row found so far on the
    model's ``arrays``, by block: the pointwise claims of a model, checked one after another
    on the same draws, share their parts (the normaliser, the largest probability, a side).
    The entry holds the arrays, so that no other arrays can take their id while it is kept;
    those of one model are kept (at every d), as its samples are."""
    if id(arrays) not in _ROW_VALUES:
        if len(_ROW_VALUES) >= 2 * len(DIMENSIONS):  # samples and corners
            _ROW_VALUES.clear()
        _ROW_VALUES[id(arrays)] = arrays, {}
    return _ROW_VALUES[id(arrays)][1]


def _row_blocks(arrays: dict, dim: int):
    """The rows of ``arrays`` in blocks of about ROW_BLOCK coordinates, each as (its first row,
    its number of rows, its arrays): an expression evaluated block by block keeps its
    intermediate arrays in the cache instead of streaming 128 MiB each through memory (16
    million coordinates at every d)."""
    rows = len(next(iter(arrays.values())))
    step = max(1, ROW_BLOCK // dim)
    for start in range(0, rows, step):
        yield start, min(step, rows - start), {v: a[start:start + step]
                                               for v, a in arrays.items()}


def _where_it_fails_in(sides: list, relation: str, arrays: dict, dim: int,
                       start: int, known: dict) -> tuple:
    """``_where_it_fails`` on the block of rows that begins at row ``start``, whose row-level
    values found so far are ``known`` (and are added to it): one number per row each, where
    the parts with one per coordinate would take 64 MiB an array at d = 4096."""
    rows = len(next(iter(arrays.values())))
    seen = dict(known)
    (lhs, lhs_terms), (rhs, rhs_terms) = ((as_samples(v, rows) for v in values_and_sizes(
        side, arrays, dim, None, seen)) for side in sides)
    known.update((key, found) for key, found in seen.items() if key[1] is None)
    terms = np.maximum(lhs_terms, rhs_terms)
    values = np.maximum(np.abs(lhs), np.abs(rhs))
    refuse_unresolved(values, terms)
    # the margin's floor is the size of the terms, but never more than 1: terms that cancel
    # may not make an error of 1 look small
    size = np.maximum(values, np.minimum(terms, 1.0))
    return lhs, rhs, start + np.flatnonzero(~_HOLDS[relation](lhs, rhs, size))


