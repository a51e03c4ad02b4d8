"""Points a model can produce, chosen to find counterexamples to pointwise claims.

A pointwise claim (an identity or inequality in the coordinates) must hold at every point of the
model's support, and only there: a claim may be true on a bounded support and false outside it.
Random draws rarely come near the support's corners, where the extremes of a bounded model live
(a softmax with k of its n logits at the top of their range and the rest at the bottom).  Each
source here hands a model its standardised latents (``Model.sample_from``): a linear image of
points of the latents' support lies in the model's support, so every point it gives is one the
model can produce.
"""

from __future__ import annotations

import random

import numpy as np
import sympy as sp

from .distributions import random_signs


class Draws:
    """Random standardised latents from one seeded generator (``sample`` in another form)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def standard(self, family, slot: int, shape: tuple) -> np.ndarray:
        return family.sample(self.rng, shape, 1.0)

    def combined(self, terms: list[tuple[np.ndarray, float]], mean: float,
                 shape: tuple) -> np.ndarray:
        """sum c x over the terms (x, c), in their order, plus ``mean``: a vector of a model
        built linearly from its latents' draws, in ``shape`` (read-only)."""
        return linear_combination(terms, mean, shape)

    def generator(self, name: str) -> np.random.Generator:
        return self.rng

    def whole(self, arrays: dict) -> dict:
        """The vectors of a model that does not build them from latents, as they come."""
        return arrays


def linear_combination(terms: list[tuple[np.ndarray, float]], mean: float,
                       shape: tuple) -> np.ndarray:
    """sum c x over the terms (x, c), in their order, plus ``mean``, broadcast to ``shape`` as
    a read-only view.  Worked block by block, each block's sum made in the cache before the
    next: over whole arrays, every product and partial sum would go out to memory and back
    (a three-term vector took 3.6 times as long).  Each element sees the same operations in
    the same order either way."""
    if not terms:
        return np.broadcast_to(np.zeros(()) + mean, shape)
    value = np.empty(np.broadcast_shapes(*(np.shape(x) for x, _ in terms)))
    scratch = np.empty(min(value.size, COMBINED_BLOCK))
    for block in _blocks(value.shape):
        out = value[block]
        product = scratch[:out.size].reshape(out.shape)
        for n, (x, c) in enumerate(terms):
            np.multiply(x[_within(x, block)], c, out=out if n == 0 else product)
            if n:
                np.add(out, product, out=out)
        if mean:
            np.add(out, mean, out=out)
    return np.broadcast_to(value, shape)


COMBINED_BLOCK = 2**15  # elements: 256 KiB a block, well inside a core's cache


def _blocks(shape: tuple):
    """Index tuples that cover an array of this (rows, width) shape in blocks of about
    COMBINED_BLOCK elements: whole rows at a time, or a long row piece by piece."""
    rows, width = shape
    if width >= COMBINED_BLOCK:
        for row in range(rows):
            for start in range(0, width, COMBINED_BLOCK):
                yield slice(row, row + 1), slice(start, start + COMBINED_BLOCK)
    else:
        step = COMBINED_BLOCK // width
        for start in range(0, rows, step):
            yield slice(start, start + step), slice(None)


def _within(x: np.ndarray, block: tuple) -> tuple:
    """The part of x that a block of the broadcast result reads: an axis of length 1 (a
    latent shared by the coordinates) is read whole."""
    return tuple(slice(None) if length == 1 else part for length, part in zip(x.shape, block))


class Scaled(Draws):
    """Random latents scaled by ``factor`` where the support allows: a latent on the whole line
    is scaled; one on [-end, end] shrinks (0 lies inside) but grows only as far as its ends; a
    two-point latent stays as drawn.  For a softmax, large factors approach one-hot and small
    ones uniform."""

    def __init__(self, rng: np.random.Generator, factor: float):
        super().__init__(rng)
        self.factor = factor

    def standard(self, family, slot, shape):
        draws = family.sample(self.rng, shape, 1.0)
        if family.end is None or (self.factor < 1 and not family.two_points):
            return draws * self.factor
        return draws if family.two_points else np.sign(draws) * float(family.end)

    def whole(self, arrays):
        """A model not built from latents is scaled about 0: its support must be the whole
        space (a nondegenerate Gaussian), or the scaled points may leave it."""
        return {vector: values * self.factor for vector, values in arrays.items()}


class Tie(Draws):
    """Random latents, each the same for every coordinate: all coordinates of a vector equal."""

    def standard(self, family, slot, shape):
        return np.broadcast_to(family.sample(self.rng, (shape[0], 1), 1.0), shape)

    def whole(self, arrays):
        """A model not built from latents: every coordinate set to the first (in its support
        when that is the whole space, as for a nondegenerate Gaussian)."""
        return {vector: np.broadcast_to(values[:, :1], values.shape)
                for vector, values in arrays.items()}


class Corners(Draws):
    """Bounded latents at the ends of their support.  The first rows hold, for each count k in
    ``counts``, the first k coordinates at +end and the others at -end (a latent shared by the
    coordinates at +end for even k); the rest are corners with random signs.  Latents on the
    whole line are drawn at random.  ``bounded`` says whether any latent had ends at all."""

    def __init__(self, rng: np.random.Generator, counts: list[int]):
        super().__init__(rng)
        self.counts, self.bounded = np.asarray(counts), False

    def standard(self, family, slot, shape):
        if family.end is None:
            return family.sample(self.rng, shape, 1.0)
        self.bounded = True
        rows, width = shape
        signs = random_signs(self.rng, shape)  # writable: its first rows are set below
        structured = min(rows, len(self.counts))
        counts = self.counts[:structured, None]
        signs[:structured] = np.where(np.arange(width) < counts if width > 1 else counts % 2 == 0,
                                      1.0, -1.0)
        return signs * float(family.end)


def exact_latent(family, value: float) -> sp.Expr:
    """A standardised draw as an exact number: the double itself, except that a draw at (the
    double nearest) an end of a bounded support is that end."""
    if family.end is not None and abs(value) == float(family.end):
        return family.end if value > 0 else -family.end
    return sp.Rational(value)


def built_from_latents(model) -> bool:
    """Whether the model gives its coordinates exactly from latent values
    (``exact_coordinates``), as a latent linear model does."""
    return callable(getattr(model, "exact_coordinates", None))


def bounded_latents(model, point: dict) -> bool:
    """Whether the model builds its vectors from latents, some of bounded range (so that its
    support has corners)."""
    probe = Corners(np.random.default_rng(0), [0])
    model.sample_from(probe, 1, 1, point)
    return probe.bounded


def corner_counts(width: int, most: int = 1024) -> list[int]:
    """Counts k of coordinates at the top for corners of ``width`` coordinates: every k from 0
    to width when that is at most ``most`` + 1 values, else every k up to 32 and ``most``
    evenly spread values of k."""
    if width + 1 <= most + 1:
        return list(range(width + 1))
    spread = np.linspace(0, width, most + 1).round().astype(int)
    return sorted(set(range(33)) | set(spread.tolist()))


def exact_points(model, coordinates: list, dim: int, point: dict) -> list[dict]:
    """Exact values of the coordinates at points the model can produce, for a search for
    counterexamples: ties, corners (the first k coordinates at the top of a bounded range, or
    far out on an unbounded one) and random points, each made from latent values for a model
    built from latents (so that k = c q stays on its line and bounded coordinates in their
    range); for any other model, whose support is taken to be the whole space, the coordinates
    are log r for rational r (e^z exact): all equal, one or two far ahead, and random."""
    if not coordinates:
        return [{}]
    rng = random.Random(20261129)
    if not built_from_latents(model):
        count = len(coordinates)
        ratios = [[1] * count, [10**6] + [1] * (count - 1), [1] * (count - 1) + [10**6],
                  [10**6, 10**6] + [1] * (count - 2) if count > 1 else [3]]
        ratios += [[sp.Rational(rng.randint(1, 60), rng.randint(1, 60)) for _ in coordinates]
                   for _ in range(3)]
        return [{c: sp.log(sp.Rational(r)) for c, r in zip(coordinates, row)} for row in ratios]
    patterns = [_tie] + [_top(k) for k in range(dim + 1)] + [_random] * 3
    points = []
    for pattern in patterns:
        latents = {latent.name: [pattern(latent.family, position, rng)
                                 for position in range(1 if latent.shared else dim)]
                   for latent in model.latents}
        values = model.exact_coordinates(latents, dim, point)
        points.append({c: values[c] for c in coordinates})
    return points


def _tie(family, position, rng):
    return sp.Rational(1, 3) if family.end is None or not family.two_points else family.end


def _top(count: int):
    """The first ``count`` coordinates at the top (+end, or far out on the whole line), the
    others at the bottom."""
    def value(family, position, rng):
        top = family.end if family.end is not None else sp.Integer(20)
        return top if position < count else (-top if family.end is not None else sp.S.Zero)
    return value


def _random(family, position, rng):
    if family.two_points:
        return rng.choice((-1, 1)) * family.end
    fraction = sp.Rational(rng.randint(-60, 60), 60)
    return fraction * (family.end if family.end is not None else 4)
