"""The named rules that justify steps, each a sound rewrite under a model's assumptions.

A step ``prev = next`` is justified by rules R when rewriting both sides with R everywhere it
applies (to a fixpoint) gives expressions equal by plain algebra.  Every rewrite is an equality
that holds under the model, so a passing check is a proof; a rewrite whose precondition fails under
the model is not made, and the failure names the precondition.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

import sympy as sp
from sympy import Add, Derivative, Dummy, Eq, Expr, Indexed, KroneckerDelta, Mul, Pow, Sum

from .algebra import canonical, distribute_sums
from .concrete import substitute_free
from .errors import UnsupportedExpression
from .expressions import (
    NOT_DIFFERENTIABLE,
    SD,
    SUMS,
    Cov,
    E,
    MaxOver,
    SumOverDistinct,
    Var,
    bound_indices,
    bound_renamed_apart,
    index_symbols,
    is_deterministic,
    is_random_coordinate,
    random_coordinates,
    rebind,
    unfold,
)
from .intervals import Ranges, is_nonnegative, is_positive
from .limits import Lim, sample_means
from .models import Model, indices_known_distinct, isserlis_moment
from .realnumbers import certainly_nonzero, certainly_positive
from .symbols import in_every_range
from .text import show

MAX_PASSES = 12


@dataclass
class Context:
    """Where a rewrite happens: the model, which index pairs are known distinct, and whether
    preconditions are enforced (strict) or only recorded (to diagnose a failed step)."""

    model: Model
    distinct: frozenset = frozenset()
    strict: bool = True
    violations: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)  # why a rule left a node alone
    assumed: list[str] = field(default_factory=list)  # lemmas and citations a rewrite used
    ranges: dict = field(default_factory=dict)  # index bound around here -> (lower, upper)
    numbers: dict = field(default_factory=dict)  # unknown -> the number it stands for

    def inside(self, node: Expr) -> Context:
        """The context of ``node``'s arguments: the indices it binds, with their ranges (and,
        for a sum over i != j, that pair known distinct).  A pair known distinct outside says
        nothing about an index the node binds anew."""
        if isinstance(node, Lim):  # its variable goes to infinity: in no range of indices
            return replace(self, distinct=frozenset(p for p in self.distinct
                                                    if node.variable not in p),
                           ranges={**self.ranges, node.variable: (sp.S.One, sp.oo)})
        if not isinstance(node, SumOverDistinct | Sum | MaxOver):
            return self
        bound = set(bound_indices(node))
        distinct = frozenset(pair for pair in self.distinct if not pair & bound)
        if isinstance(node, SumOverDistinct):
            i, j = node.indices
            return replace(self, distinct=distinct | {frozenset(node.indices)},
                           ranges={**self.ranges, i: (sp.S.One, node.upper),
                                   j: (sp.S.One, node.upper)})
        return replace(self, distinct=distinct,
                       ranges={**self.ranges, **{v: (lo, hi) for v, lo, hi in node.limits}})

    def names_a_coordinate(self, index: Expr) -> bool:
        """An index known to lie in 1..dimension: a free index symbol (the convention of
        derivations), one bound here to a range inside 1..dimension, or a whole number between
        1 and the dimension; not j + 1, 0 or n + 1."""
        dimension = self.model.dimension
        if index in self.ranges:
            lower, upper = self.ranges[index]
            return bool((lower - 1).is_nonnegative and (upper - dimension).is_nonpositive)
        return index == dimension or in_every_range(index, dimension)

    def generic_indices_apply(self, fact: Expr) -> str | None:
        """A fact with free indices holds for each index in 1..dimension: where one of them is
        bound to another range here, why the fact does not apply, else None."""
        for index in sorted(index_symbols(fact), key=sp.default_sort_key):
            if not index.is_Integer and not self.names_a_coordinate(index):
                return (f"the fact holds for {index} in 1..{self.model.dimension}, but here "
                        f"{index} runs over {'..'.join(map(str, self.ranges[index]))}")
        return None

    def decline(self, reason: str) -> None:
        """Leave the node alone, recording why, for the message of a step that fails."""
        if reason not in self.declined:
            self.declined.append(reason)

    def precondition(self, holds: bool, reason: str) -> bool:
        """Whether the rewrite may go ahead; a failed precondition is recorded either way."""
        if not holds and reason not in self.violations:
            self.violations.append(reason)
        return holds or not self.strict


class Rule:
    """A rewrite ``rewrite(node, ctx) -> new node or None``; ``fact`` is the identity it uses."""

    name: str = ""
    fact: str = ""
    latex: str = ""  # how the rule is cited in rendered derivations

    def rewrite(self, node: Expr, ctx: Context) -> Expr | None:
        raise NotImplementedError

    def unfolded(self, definitions: dict) -> Rule:
        """This rule with the derivation's abbreviations (S := ...) spelled out."""
        return self

    def __repr__(self) -> str:
        return self.name


def rewrite_everywhere(expr: Expr, rules: list[Rule], ctx: Context) -> Expr:
    """Apply ``rules`` bottom-up, to every sub-expression, until nothing changes."""
    for _ in range(MAX_PASSES):
        new = _one_pass(expr, rules, ctx)
        if new == expr:
            return new
        expr = new
    return expr


def _one_pass(expr: Expr, rules: list[Rule], ctx: Context) -> Expr:
    if expr.args:
        inner = ctx.inside(expr)
        expr = expr.func(*(_one_pass(a, rules, inner) for a in expr.args))
    for rule in rules:
        new = rule.rewrite(expr, ctx)
        if new is not None:
            expr = new
    return expr


def _random_part(x: Expr) -> tuple[Expr, Expr]:
    """Split a product into (deterministic factor, random factor)."""
    constant, random = [], []
    for factor in Mul.make_args(x):
        (constant if is_deterministic(factor) else random).append(factor)
    return Mul(*constant), Mul(*random)


class Linearity(Rule):
    name = "linearity"
    fact = "E[aX + bY] = aE[X] + bE[Y] and E[sum_i X_i] = sum_i E[X_i] for constants a, b"
    latex = "linearity of expectation"

    def rewrite(self, node, ctx):
        if not isinstance(node, E):
            return None
        x = distribute_sums(sp.expand(node.args[0]))
        if is_deterministic(x):
            return x
        if isinstance(x, Add):
            return Add(*(E(t) for t in x.args))
        if isinstance(x, SUMS):
            return rebind(x, E(x.function))
        constant, random = _random_part(x)
        return constant * E(random) if constant != 1 else None


def _expected_monomial(node: Expr) -> tuple[Expr, dict] | None:
    """For E[c * prod v^p] with coordinates v: (c, {v: p}); None for any other node."""
    if not isinstance(node, E):
        return None
    constant, random = _random_part(sp.expand(node.args[0]))
    if isinstance(random, Add) or random.has(*SUMS):
        return None
    powers = random.as_powers_dict()
    if not all(is_random_coordinate(c) and powers[c].is_Integer and powers[c] > 0
               for c in powers):
        return None  # E[q_1^-2] is no product of moments (it is not even finite)
    return constant, powers


class Independence(Rule):
    name = "independence"
    fact = "E[XY] = E[X]E[Y] for independent X, Y"
    latex = "independence"

    def rewrite(self, node, ctx):
        monomial = _expected_monomial(node)
        if monomial is None:
            return None
        constant, powers = monomial
        groups = self._groups(list(powers), ctx)
        if len(groups) < 2:
            return None
        return constant * Mul(*(E(Mul(*(c ** powers[c] for c in g))) for g in groups))

    @staticmethod
    def _groups(coordinates: list, ctx: Context) -> list[list]:
        """Classes of coordinates linked by possible dependence (union-find on pairs)."""
        parent = list(range(len(coordinates)))

        def root(n):
            while parent[n] != n:
                n = parent[n]
            return n

        for a in range(len(coordinates)):
            for b in range(a + 1, len(coordinates)):
                why = ctx.model.dependence(coordinates[a], coordinates[b], ctx.distinct)
                if why is not None and not ctx.precondition(False, f"independence: {why}"):
                    parent[root(a)] = root(b)
        classes: dict = {}
        for n, c in enumerate(coordinates):
            classes.setdefault(root(n), []).append(c)
        return list(classes.values())


class VarianceOfSum(Rule):
    name = "variance_of_sum"
    fact = ("Var(X_1 + ... + X_m) = Var(X_1) + ... + Var(X_m) and Var(sum_i X_i) = "
            "sum_i Var(X_i) for independent terms (constant terms add nothing)")
    latex = "the variance of a sum of independent terms"

    def rewrite(self, node, ctx):
        if not isinstance(node, Var):
            return None
        total = node.args[0]
        if isinstance(total, Sum) and len(total.limits) == 1:
            (index, _, _), = total.limits
            other = Dummy(f"{index.name}'", integer=True, positive=True)
            why = _dependence(total.function, substitute_free(total.function, {index: other}),
                              ctx, ctx.distinct | {frozenset({index, other})})
            if not ctx.precondition(why is None, f"variance_of_sum: {why}"):
                return None
            return Sum(Var(total.function), *total.limits)
        terms = [t for t in Add.make_args(total) if not is_deterministic(t)]
        if isinstance(total, Add) and len(terms) == 1:  # Var(X + c) = Var(X)
            return Var(terms[0])
        if not isinstance(total, Add) or len(terms) < 2:
            return None
        for n, a in enumerate(terms):
            for b in terms[n + 1:]:
                why = _dependence(a, b, ctx, ctx.distinct)
                if not ctx.precondition(why is None, f"variance_of_sum: {why}"):
                    return None
        return Add(*(Var(t) for t in terms))


def _dependence(a: Expr, b: Expr, ctx: Context, distinct: frozenset) -> str | None:
    """Why the random expressions a and b may be dependent (a coordinate of one may depend on
    a coordinate of the other under the model), or None when they are independent; the models
    here make sets of coordinates independent when their members are pairwise."""
    # an index that a sum inside a or b binds runs over every value: no hypothesis about the
    # name holds of it, so it may meet any coordinate of the other term
    bound = {x for e in (a, b) for node in sp.preorder_traversal(e) for x in bound_indices(node)}
    free = frozenset(pair for pair in distinct if not pair & bound)
    for x in sorted(random_coordinates(a), key=str):
        for y in sorted(random_coordinates(b), key=str):
            why = ctx.model.dependence(x, y, free)
            if why is not None:
                return why
    return None


class ModelMoment(Rule):
    name = "model_moment"
    fact = ("E[prod_v v_i^(p_v)] for the coordinates of one index i is the moment the model "
            "gives (E[q_i k_i], E[q_i^4], E[q_i^2 k_i^2], ...); the variance of such a product "
            "is E[X^2] - E[X]^2 of two of them, the covariance of two E[X Y] - E[X] E[Y], and "
            "the mean of a polynomial in them is taken term by term")
    latex = "the model's moments"

    def rewrite(self, node, ctx):
        if isinstance(node, Var):
            mean, square = (self.rewrite(E(node.args[0] ** power), ctx) for power in (1, 2))
            return None if mean is None or square is None else sp.expand(square - mean**2)
        if isinstance(node, Cov):  # a constant among them is its own mean: Cov(q_i, 3) = 0
            x, y = node.args
            both, first, second = (self._mean(t, ctx) for t in (x * y, x, y))
            if any(part is None for part in (both, first, second)):
                return None
            return sp.expand(both - first * second)
        if isinstance(node, E) and isinstance(expanded := sp.expand(node.args[0]), Add) \
                and not expanded.has(*SUMS):  # E[q_i^2 (k_i - k~_i)^2], term by term
            terms = [self._mean(term, ctx) for term in expanded.args]
            return None if any(term is None for term in terms) else Add(*terms)
        monomial = _expected_monomial(node)
        if monomial is None or ctx.model.index_generic:
            return None
        constant, powers = monomial
        indices = {c.indices for c in powers}
        if len(indices) != 1:  # coordinates of several indices: independence or Isserlis
            return ctx.decline(f"model_moment: {show(node)} holds coordinates of several "
                               "indices; independence or isserlis splits it first") \
                if len(indices) > 1 else None
        ((index,),) = indices
        lawless = sorted({show(c.base.label) for c in powers if c.base not in ctx.model.vectors})
        if lawless:
            return ctx.decline(f"model_moment: the model {ctx.model.name} gives "
                               f"{', '.join(lawless)} no law")
        if not (index >= 1 if index.is_Integer else ctx.names_a_coordinate(index)):
            return None
        return constant * ctx.model.joint_moment([{c.base: int(p) for c, p in powers.items()}])

    def _mean(self, x: Expr, ctx) -> Expr | None:
        """E[x] as this rule gives it: a constant is its own mean."""
        return x if is_deterministic(x) else self.rewrite(E(x), ctx)


class ZeroMean(Rule):
    name = "zero_mean"
    fact = "E[v_i] = 0 for a coordinate of a zero-mean vector"
    latex = "zero mean"

    def rewrite(self, node, ctx):
        if not (isinstance(node, E) and is_random_coordinate(node.args[0])):
            return None
        mean = ctx.model.mean(node.args[0])
        reason = f"zero_mean: the model gives E[{show(node.args[0])}] = {show(mean)}, not 0"
        return sp.S.Zero if ctx.precondition(mean == 0, reason) else None


class ModelVariance(Rule):
    name = "model_variance"
    fact = "Var(v_i) is the variance the model assigns to the coordinates of v"
    latex = "the model's variance"

    def rewrite(self, node, ctx):
        if isinstance(node, Var) and is_random_coordinate(node.args[0]):
            return ctx.model.variance(node.args[0])
        return None


class SecondMoment(Rule):
    name = "second_moment"
    fact = "E[X^2] = Var(X) + E[X]^2"
    latex = r"$\mathbb{E}[X^2] = \operatorname{Var}(X) + \mathbb{E}[X]^2$"

    def rewrite(self, node, ctx):
        """E[c X^2] -> c (Var(X) + E[X]^2), whichever way SymPy arranged the square: it turns
        (S / sqrt(d))^2 into S^2 / d, so X is read off the even powers of the random part."""
        if not isinstance(node, E):
            return None
        constant, random = _random_part(node.args[0])
        powers = random.as_powers_dict()
        if random == 1 or not all(p.is_Integer and p > 0 and p % 2 == 0
                                  for p in powers.values()):
            return None
        x = Mul(*(base ** (p // 2) for base, p in powers.items()))
        if certainly_positive(constant):  # E[(sqrt(c) X)^2]: keep the constant with X
            x, constant = sp.sqrt(constant) * x, sp.S.One
        return constant * (Var(x) + E(x) ** 2)


class VarianceDefinition(Rule):
    name = "variance_definition"
    fact = "Var(X) = E[(X - E[X])^2]"
    latex = "definition of variance"

    def rewrite(self, node, ctx):
        if isinstance(node, Var):
            x = node.args[0]
            return E((x - E(x)) ** 2)
        return None


class CovarianceDefinition(Rule):
    name = "covariance_definition"
    fact = "Cov(X, Y) = E[XY] - E[X]E[Y]"
    latex = r"$\operatorname{Cov}(X, Y) = \mathbb{E}[XY] - \mathbb{E}[X]\mathbb{E}[Y]$"

    def rewrite(self, node, ctx):
        if isinstance(node, Cov):
            x, y = node.args
            return E(x * y) - E(x) * E(y)
        return None


class Isserlis(Rule):
    name = "isserlis"
    fact = ("for jointly Gaussian X_1..X_n, E[X_1...X_n] is the sum over partial pairings of "
            "the product of the paired covariances and the unpaired means (Isserlis/Wick)")
    latex = "Isserlis' theorem"

    def rewrite(self, node, ctx):
        monomial = _expected_monomial(node)
        if monomial is None:
            return None
        constant, powers = monomial
        if not ctx.precondition(ctx.model.is_gaussian,
                                f"isserlis: the coordinates are not jointly Gaussian under "
                                f"{ctx.model.name}"):
            return None
        factors = [c for c, p in powers.items() for _ in range(int(p))]
        model = ctx.model
        if model.index_generic:  # its covariances are valid for equal and distinct indices
            return constant * isserlis_moment(factors, model.mean,
                                              lambda a, b: model.covariance(a, b, None))
        return constant * isserlis_moment(
            factors, model.mean, lambda a, b: _covariance_by_coincidence(a, b, ctx))


def _covariance_by_coincidence(a: Indexed, b: Indexed, ctx: Context) -> Expr:
    """Cov(a, b) under a model whose covariances depend only on whether two indices coincide:
    its value where that is known, else delta_{ij} Cov_= + (1 - delta_{ij}) Cov_!= (sigma_q^2
    delta_{ij} for E[q_i q_j] of independent coordinates), which holds whichever it is."""
    (ia,), (ib,) = a.indices, b.indices
    if ia == ib or indices_known_distinct(ia, ib, ctx.distinct):
        return ctx.model.covariance(a, b, ia == ib)
    same = KroneckerDelta(ia, ib)
    return same * ctx.model.covariance(a, b, True) + \
        (1 - same) * ctx.model.covariance(a, b, False)


class LawOfLargeNumbers(Rule):
    name = "law_of_large_numbers"
    fact = ("lim_n h((1/n) sum_i f_1(v_i), ...) = h(E[f_1(v_1)], ...) almost surely, for "
            "summands i.i.d. across i with E|f_k| finite and h continuous at the limit point "
            "(strong law of large numbers and continuous mapping)")
    latex = "the strong law of large numbers"

    def rewrite(self, node, ctx):
        if not isinstance(node, Lim):
            return None
        means = sample_means(node)  # not a function of sample means: undecided, with why
        if node.variable != ctx.model.dimension:
            raise UnsupportedExpression(f"law_of_large_numbers: the limit is in "
                                        f"{node.variable}, not in the model's size "
                                        f"{ctx.model.dimension}")
        why = ctx.model.iid_reason(means.vectors)
        if not ctx.precondition(why is None, f"law_of_large_numbers: {why}"):
            return None
        for summand in means.summands:
            _moments_finite(summand, ctx.model)
        _continuous_at_limit(means)
        return means.limit([E(f) for f in means.summands])


def _moments_finite(summand: Expr, model: Model) -> None:
    """E|f| < oo for f a polynomial in the coordinates (every family here has all moments) or
    a polynomial times an exponential of coordinates when the model is Gaussian (its moment
    generating function is finite everywhere); otherwise it is not established here."""
    coordinates = sorted(random_coordinates(summand), key=str)
    polynomial = all(_degree_known(summand, c) for c in coordinates)
    if polynomial or (model.is_gaussian and _polynomial_times_exponentials(summand,
                                                                         coordinates)):
        return
    raise UnsupportedExpression(f"law_of_large_numbers: E|{show(summand)}| < oo is not "
                                f"established under model {model.name}")


def _polynomial_times_exponentials(summand: Expr, coordinates: list) -> bool:
    """Whether the summand, expanded, is a sum of products of a polynomial in the coordinates
    and exponentials of affine functions of them: an exponential anywhere else (1/(e^z - 1),
    2^(e^z), both without a mean under a Gaussian) is not such a product; replacing each
    e^u by 1 had made them 1/0 and 2, which SymPy counts as polynomials (review round 53)."""
    for term in sp.Add.make_args(sp.expand(summand)):
        for factor in sp.Mul.make_args(term):
            if isinstance(factor, sp.exp):
                if not _jointly_linear(factor.args[0], coordinates):
                    return False
            elif not all(_degree_known(factor, c) for c in coordinates) \
                    or factor.has(sp.exp, sp.zoo, sp.nan, sp.oo):
                return False
    return True


def _jointly_linear(exponent: Expr, coordinates: list) -> bool:
    """Whether the exponent is affine in the coordinates taken together (e^{q k} is not: its
    mean is infinite for large enough variances)."""
    expanded = sp.expand(exponent)
    if not all(expanded.is_polynomial(c) for c in coordinates):
        return False
    return not coordinates or sp.Poly(expanded, *coordinates).total_degree() <= 1


def _degree_known(expr: Expr, coordinate: Expr) -> bool:
    """Whether expr is a polynomial in the coordinate (after expanding)."""
    return sp.expand(expr).is_polynomial(coordinate)


def _continuous_at_limit(means) -> None:
    """Each condition of continuity decided from what the summands are: a mean of positive
    summands is positive, so its powers are non-zero; anything else is not established."""
    for kind, expr in means.conditions():
        holds = certainly_nonzero(expr) if kind == "nonzero" else certainly_positive(expr)
        if not holds:
            raise UnsupportedExpression(f"law_of_large_numbers: whether {show(expr)} is "
                                        f"{kind} at the limit point is not established, so "
                                        "continuity of the map is not either")


class GaussianMGF(Rule):
    name = "gaussian_mgf"
    fact = "E[e^(c + t X)] = e^(c + t mu + t^2 sigma^2 / 2) for a Gaussian X with mean mu and " \
           "variance sigma^2 (its moment generating function)"
    latex = r"$\mathbb{E}[e^{tX}] = e^{t\mu + t^2\sigma^2/2}$, $X$ Gaussian"

    def rewrite(self, node, ctx):
        if not (isinstance(node, E) and isinstance(node.args[0], sp.exp)):
            return None
        split = _affine_in_one_coordinate(node.args[0].args[0])
        if split is None:
            return None
        constant, t, x = split
        if not ctx.precondition(ctx.model.is_gaussian,
                                f"gaussian_mgf: {show(x)} is not Gaussian under "
                                f"{ctx.model.name}"):
            return None
        return sp.exp(constant + t * ctx.model.mean(x) + t ** 2 * ctx.model.variance(x) / 2)


_SMOOTH = (sp.exp, sp.sin, sp.cos, sp.tanh)


def _smooth_in(g: Expr, x: Expr) -> bool:
    """g is built from x by sums, products, whole non-negative powers and exp, sin, cos, tanh:
    differentiable everywhere, as Stein's lemma needs (a jump or a kink makes it false)."""
    if not g.has(x) or g == x:
        return True
    if isinstance(g, (Add, Mul)) or isinstance(g, _SMOOTH):
        return all(_smooth_in(a, x) for a in g.args)
    if isinstance(g, Pow):
        return g.exp.is_Integer and g.exp >= 0 and _smooth_in(g.base, x) \
            and not g.exp.has(x)
    return False


def _affine_in_one_coordinate(expr: Expr) -> tuple[Expr, Expr, Expr] | None:
    """(c, t, X) with expr = c + t X for one random coordinate X, or None."""
    coordinates = random_coordinates(expr)
    if len(coordinates) != 1:
        return None
    (x,) = coordinates
    t = sp.expand(expr).coeff(x)
    constant = sp.expand(expr - t * x)
    if random_coordinates(t) or random_coordinates(constant):
        return None
    return constant, t, x


class Stein(Rule):
    name = "stein"
    fact = "E[X g(X)] = mu E[g(X)] + sigma^2 E[g'(X)] for a Gaussian X with mean mu and " \
           "variance sigma^2 (Stein's lemma; integration by parts against the density)"
    latex = r"Stein's lemma $\mathbb{E}[X g(X)] = \mu\mathbb{E}[g(X)] + " \
            r"\sigma^2\mathbb{E}[g'(X)]$"

    def rewrite(self, node, ctx):
        if not (isinstance(node, E) and isinstance(node.args[0], Mul)):
            return None
        argument = node.args[0]
        coordinates = random_coordinates(argument)
        if len(coordinates) != 1:
            return None  # g of other coordinates would need their covariances with X
        (x,) = coordinates
        if x not in argument.args and not any(isinstance(f, Pow) and f.base == x
                                              and f.exp.is_Integer and f.exp > 0
                                              for f in argument.args):
            return None  # X is not a factor (X^-1 g would leave g = X^-2 g, not integrable)
        if not ctx.precondition(ctx.model.is_gaussian,
                                f"stein: {show(x)} is not Gaussian under {ctx.model.name}"):
            return None
        g = argument / x
        if not ctx.precondition(_smooth_in(g, x), f"stein: g = {show(g)} is not known to be "
                                                  f"differentiable everywhere in {show(x)}"):
            return None
        return ctx.model.mean(x) * E(g) + ctx.model.variance(x) * E(sp.diff(g, x))


class SDDefinition(Rule):
    name = "sd_definition"
    fact = "sd(X) = sqrt(Var(X))"
    latex = "definition of standard deviation"

    def rewrite(self, node, ctx):
        return sp.sqrt(Var(node.args[0])) if isinstance(node, SD) else None


class VarianceScaling(Rule):
    name = "variance_scaling"
    fact = "Var(cX) = c^2 Var(X) for a constant c"
    latex = r"$\operatorname{Var}(cX) = c^2\operatorname{Var}(X)$"

    def rewrite(self, node, ctx):
        if not isinstance(node, Var):
            return None
        # as written first: expanding (X - Y)/c would scatter the constant over the terms
        for form in (node.args[0], distribute_sums(sp.expand(node.args[0]))):
            constant, random = _random_part(form)
            if constant != 1:
                return constant ** 2 * Var(random)
        return None


def _fresh_copy(s: Expr) -> Expr:
    renaming = {v: Dummy(v.name, **v._assumptions_orig) for v in bound_indices(s)}
    if isinstance(s, SumOverDistinct):
        return SumOverDistinct(s.function.xreplace(renaming), *(renaming[v] for v in s.indices),
                               s.upper)
    return Sum(s.function.xreplace(renaming), *((renaming[v], lo.xreplace(renaming),
                                                  hi.xreplace(renaming))
                                                 for v, lo, hi in s.limits))


class ExpandSquare(Rule):
    name = "expand_square"
    fact = ("(sum_i a_i)(sum_j b_j) = sum_i sum_j a_i b_j; "
            "in particular (sum_i x_i)^2 = sum_i sum_j x_i x_j")
    latex = "expanding the square"

    def rewrite(self, node, ctx):
        factors = []
        for factor, power in node.as_powers_dict().items() if isinstance(node, (Mul, Pow)) else []:
            if not (isinstance(factor, SUMS) and power.is_Integer and power > 0):
                factors.append(factor ** power)
                continue
            factors.extend([factor] * int(power))
        sums = [f for f in factors if isinstance(f, SUMS)]
        if len(sums) < 2:
            return None
        copies = [_fresh_copy(s) for s in sums]
        body = Mul(*(f for f in factors if not isinstance(f, SUMS))) * \
            Mul(*(c.function for c in copies))
        for c in reversed(copies):
            body = rebind(c, body)
        return body


class SplitDiagonal(Rule):
    name = "split_diagonal"
    fact = "sum_i sum_j f(i, j) = sum_i f(i, i) + sum_{i != j} f(i, j)"
    latex = r"splitting $i = j$ from $i \neq j$"

    def rewrite(self, node, ctx):
        if not (isinstance(node, Sum) and len(node.limits) >= 2):
            return None
        *inner, (j, lo_j, hi_j), (i, lo_i, hi_i) = node.limits
        if (lo_i, hi_i) != (lo_j, hi_j) or lo_i != 1:
            return None
        body = Sum(node.function, *inner) if inner else node.function
        return Sum(body.xreplace({j: i}), (i, lo_i, hi_i)) + SumOverDistinct(body, i, j, hi_i)


class CountTerms(Rule):
    name = "count_terms"
    fact = "sum_{i=1}^{n} c = n c and sum_{i != j} c = n(n - 1) c for c free of the indices"
    latex = "counting terms"

    def rewrite(self, node, ctx):
        if isinstance(node, SumOverDistinct):
            return self._distinct(node)
        if not isinstance(node, Sum):
            return None
        limits = node.limits
        countable = [limit for n, limit in enumerate(limits)
                     if not _mentioned(limit[0], node.function, limits[:n] + limits[n + 1:])]
        if not countable:
            return None
        kept = [limit for limit in node.limits if limit not in countable]
        count = Mul(*(hi - lo + 1 for _, lo, hi in countable))
        return Sum(count * node.function, *kept) if kept else count * node.function

    @staticmethod
    def _distinct(node: SumOverDistinct) -> Expr | None:
        i, j = node.indices
        used = {x for x in (i, j) if node.function.has(x)}
        n = node.upper
        if i not in used and j not in used:
            return n * (n - 1) * node.function
        if i in used and j in used:
            return None
        kept = i if i in used else j
        return Sum((n - 1) * node.function, (kept, 1, n))


def _mentioned(variable, body: Expr, other_limits) -> bool:
    """Whether a summation variable occurs in the summand or in another limit's bounds."""
    bounds = [b for _, lo, hi in other_limits for b in (lo, hi)]
    return any(e.has(variable) for e in [body, *bounds])  # has(): derivative variables too


class Differentiate(Rule):
    name = "differentiate"
    fact = "the rules of calculus (SymPy's differentiation of the expression as written)"
    latex = "differentiation"

    def rewrite(self, node, ctx):
        if not isinstance(node, Derivative):
            return None
        if not ctx.precondition(not node.expr.has(*NOT_DIFFERENTIABLE),
                                f"differentiate: {show(node.expr)} has a kink or a jump, where "
                                "it is not differentiable"):
            return None
        return node.doit(deep=False)


class Sift(Rule):
    name = "sift"
    fact = "sum_k delta_{jk} f(k) = f(j) for an index j in the range of k"
    latex = r"$\sum_k \delta_{jk} f(k) = f(j)$"

    def rewrite(self, node, ctx):
        """Any index k of the sum whose range is 1..dimension and on which no other range
        depends, against an index j that lies in 1..dimension (``Context.names_a_coordinate``:
        another index of the same sum bound to such a range, a free index, an integer)."""
        if not isinstance(node, Sum):
            return None
        for n, (index, lower, upper) in enumerate(node.limits):
            others = node.limits[:n] + node.limits[n + 1:]
            if lower != 1 or upper != ctx.model.dimension or any(
                    bound.has(index) for _, lo, hi in others for bound in (lo, hi)):
                continue
            around = ctx.inside(Sum(node.function, *others)) if others else ctx
            for factor in Mul.make_args(node.function):
                if not (isinstance(factor, KroneckerDelta) and index in factor.args):
                    continue
                other = factor.args[0] if factor.args[1] == index else factor.args[1]
                if other != index and around.names_a_coordinate(other):
                    # a sum inside that binds the other index would capture it
                    body = bound_renamed_apart(node.function / factor, {other})
                    body = body.xreplace({index: other})
                    return Sum(body, *others) if others else body
        return None


class MaxMonotone(Rule):
    """An equality: a non-decreasing function commutes with the maximum."""

    name = "max_monotone"
    fact = "g(max_l x_l) = max_l g(x_l) for g non-decreasing on the values x_l " \
           "(x^a for x >= 0, a > 0; c x for c >= 0; e^x; log x for x > 0)"
    latex = r"$g(\max_l x_l) = \max_l g(x_l)$, $g$ non-decreasing"

    def rewrite(self, node, ctx):
        ranges = Ranges(ctx.model.dimension, dict(ctx.ranges))  # bound indices: their ranges
        if isinstance(node, Pow) and isinstance(node.base, MaxOver) and node.exp.is_number \
                and node.exp.is_real:
            inner, exponent = node.base, node.exp
            odd = exponent.is_Integer and exponent % 2 == 1
            if certainly_positive(exponent) and (odd or is_nonnegative(inner, ranges)):
                return MaxOver(inner.function ** exponent, *inner.limits)
        if isinstance(node, (sp.exp, sp.log)) and isinstance(node.args[0], MaxOver):
            inner = node.args[0]
            if isinstance(node, sp.exp) or is_positive(inner.function,
                                                       ranges.with_limits(inner.limits)):
                return MaxOver(node.func(inner.function), *inner.limits)
        if isinstance(node, Mul):
            maxima = [f for f in node.args if isinstance(f, MaxOver)]
            if len(maxima) == 1:
                inner = maxima[0]
                factor = node / inner
                if not factor.has(inner.index) and is_nonnegative(factor, ranges):
                    return MaxOver(factor * inner.function, *inner.limits)
        return None


class Algebra(Rule):
    name = "algebra"
    fact = "plain algebra; E, Var and sd are opaque"
    latex = "algebra"

    def rewrite(self, node, ctx):
        return None


class Lemma(Rule):
    """Rewrite with an equation established elsewhere.  The rule check does not prove the
    equation: it rewrites only under a model where ``holds`` says it was established (the
    runner asks the exact check), and the pass then rests on the lemma, which reports list."""

    name = "lemma"

    def __init__(self, equation: Eq, label: str = ""):
        self.equation = equation
        self.label = label or f"{show(equation.lhs)} = {show(equation.rhs)}"
        self.fact = f"the lemma {self.label}"
        self.latex = rf"by ${sp.latex(equation.lhs)} = {sp.latex(equation.rhs)}$"
        self._pattern = canonical(equation.lhs)
        #: model name -> None when the lemma holds under it, else why not
        self.holds: dict[str, str | None] = {}

    @property
    def assumption(self) -> str:
        equation = f"{show(self.equation.lhs)} = {show(self.equation.rhs)}"
        named = "" if self.label == equation else f"{self.label}: "  # an unnamed one once
        return f"lemma {named}{equation} (established by the exact engine under each model)"

    def rewrite(self, node, ctx):
        if type(node) is not type(self.equation.lhs):
            return None
        renaming = instance_renaming(self.equation, node, self._pattern)
        if renaming is None:
            return None
        equation = instance(self.equation, renaming)
        problem = self.holds.get(ctx.model.name, f"lemma {self.label} was not established "
                                                 f"under {ctx.model.name}") \
            or ctx.generic_indices_apply(sp.Tuple(*equation.args))
        if ctx.precondition(problem is None, problem or ""):
            ctx.assumed.append(self.assumption)
            return equation.rhs
        return None

    def unfolded(self, definitions):
        lhs, rhs = (unfold(side, definitions) for side in (self.equation.lhs, self.equation.rhs))
        unfolded = Lemma(Eq(lhs, rhs), self.label)
        unfolded.holds = self.holds
        return unfolded

    def __repr__(self) -> str:
        return f"lemma({self.label})"


def instance_renaming(equation: Eq, node: Expr, pattern: Expr | None = None) -> dict | None:
    """The values of the equation's free indices that make its left side ``node`` ({} when it
    is ``node`` as stated), or None; ``pattern`` is the left side's canonical form, if known.
    An equation shown in every case of its free indices coinciding or not holds for every
    value of them: stated with i, it rewrites E[q_j k_j] and E[q_2 k_2] as well, and the
    Jacobian's dp_i/dz_j = p_i (delta_ij - p_j) rewrites dp_i/dz_i."""
    if canonical(node) == (canonical(equation.lhs) if pattern is None else pattern):
        return {}
    free = sorted((x for x in index_symbols(equation.lhs) if not x.is_Integer),
                  key=sp.default_sort_key)
    candidates = sorted((x for x in index_symbols(node) if not x.is_Integer or x >= 1),
                        key=sp.default_sort_key)
    if not free or len(candidates) ** len(free) > MAX_RENAMINGS:
        return None
    apart = _bound_apart(equation)  # a value may be named like an index the equation binds
    for values in itertools.product(candidates, repeat=len(free)):
        renaming = dict(zip(free, values))
        if canonical(apart.lhs.xreplace(renaming)) == canonical(node):
            return renaming
    return None


def _bound_apart(equation: Eq) -> Eq:
    bound = {b for x in sp.preorder_traversal(equation) for b in bound_indices(x)}
    return bound_renamed_apart(equation, bound)


def instance(equation: Eq, renaming: dict) -> Eq:
    """The equation at the values ``renaming`` gives its free indices, its bound indices
    renamed apart first: E[q_i^2] = sigma^2 sum_i delta_ij at i = j must keep its sum over
    its own index, not become sigma^2 sum_j delta_jj (review round 76)."""
    return _bound_apart(equation).xreplace(renaming) if renaming else equation


MAX_RENAMINGS = 4096  # index assignments an equation tries before it gives up matching a node


def lemma(equation: Eq, label: str = "") -> Lemma:
    """Cite an equation proved elsewhere (``by=lemma(Eq(E(S), 0))``)."""
    return Lemma(equation, label)


EQUALITY_RULES = (
    Linearity(), Independence(), ZeroMean(), ModelVariance(), SecondMoment(),
    VarianceDefinition(), SDDefinition(), CovarianceDefinition(), VarianceScaling(),
    ExpandSquare(), SplitDiagonal(), CountTerms(), Isserlis(), Differentiate(), Sift(),
    VarianceOfSum(), ModelMoment(),
    MaxMonotone(), GaussianMGF(), Stein(), LawOfLargeNumbers(), Algebra())
