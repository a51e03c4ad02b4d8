"""Citing a derivation: its claim, once its own steps are proved under the model, as a fact
that later steps may use (Lean's ``calc _ ≤ c := my_lemma``).

``cite(other)`` turns the claim ``lhs ≤ rhs`` of the derivation ``other`` into a bound: any
part of an expression that is exactly ``lhs`` may be replaced by ``rhs`` where that moves the
whole the right way (see :mod:`sdpa_proofs.bounds`); an equation cited this way also rewrites.
"""

from __future__ import annotations

import sympy as sp

from .algebra import algebraically_equal, canonical
from .bounds import LOWER, UPPER, BoundRule
from .derivation import Derivation
from .expressions import index_symbols, unfold
from .models import indices_known_distinct
from .registry import resolve
from .relations import implies
from .rulecheck import rule_check
from .rules import Context, instance, instance_renaming
from .text import show

_SIDES = {"<=": UPPER, "<": UPPER, ">=": LOWER, ">": LOWER}
_TURNED = {UPPER: LOWER, LOWER: UPPER}


class Cite(BoundRule):
    name = "cite"

    def __init__(self, derivation: Derivation):
        self.derivation = derivation
        where = derivation.where
        self.lhs, self.rhs = (unfold(x, where) for x in (derivation.claim.lhs,
                                                          derivation.claim.rhs))
        self._patterns = canonical(self.lhs), canonical(self.rhs)
        self._equation = sp.Eq(self.lhs, self.rhs, evaluate=False)
        self.fact = f"{derivation.name}: {show(derivation.claim.lhs)} " \
                    f"{derivation.claim.rel_op} {show(derivation.claim.rhs)}"
        self.latex = f"by {derivation.name}"
        self._established: dict = {}

    def bounds(self, node, ranges, maxima):
        relation = self.derivation.relation
        if relation == "=" or type(node) not in (type(self.lhs), type(self.rhs)):
            return  # an equation rewrites instead; other kinds of node cannot match
        if self.derivation.distinct or any(
                not x.is_Integer and x in ranges.bound
                for x in index_symbols(self.lhs) | index_symbols(self.rhs)):
            return  # hypotheses on its indices cannot be checked where a bound would apply
        form = canonical(node)
        if form == self._patterns[0]:
            yield self.rhs, _SIDES[relation]
        if form == self._patterns[1]:
            yield self.lhs, _TURNED[_SIDES[relation]]

    def rewrite(self, node, ctx):
        """A cited equation rewrites lhs to rhs, as a lemma does, at any values of its free
        indices (its claim holds for every value: dp_i/dz_j = p_i (delta_ij - p_j) at j = i)."""
        if self.derivation.relation != "=" or type(node) is not type(self.lhs):
            return None
        renaming = instance_renaming(self._equation, node, self._patterns[0])
        if renaming is None:
            return None
        for pair in (sorted(pair, key=str) for pair in self.derivation.distinct):
            a, b = (sp.sympify(x).xreplace(renaming) for x in pair)
            if not ctx.precondition(indices_known_distinct(a, b, ctx.distinct),
                                    f"cited {self.derivation.name} holds for "
                                    f"{' ≠ '.join(map(show, pair))} only; here they stand for "
                                    f"{show(a)} and {show(b)}, not known to differ"):
                return None
        lhs, rhs = instance(self._equation, renaming).args
        # the free indices of both sides: the right side lands where the left one stood
        problem = ctx.generic_indices_apply(sp.Tuple(lhs, rhs)) or self.establish(ctx)
        return rhs if ctx.precondition(problem is None, problem or "") else None

    def establish(self, ctx: Context) -> str | None:
        """The cited derivation's steps pass their rule checks under the model and compose to
        its claim (its other checks run where it is verified itself)."""
        model = ctx.model
        if model.name not in self._established:
            self._established[model.name] = self._prove(model)
        problem, assumed = self._established[model.name]
        if problem is None:
            ctx.assumed.extend(assumed)
        return problem

    def _prove(self, model) -> tuple[str | None, tuple[str, ...]]:
        """(None, what the cited proof rests on) when it holds, else (why not, ())."""
        derivation, where = self.derivation, self.derivation.where
        proved = derivation.proves()
        if not derivation.steps or proved is None or not implies(proved, derivation.relation):
            return f"cited {derivation.name}: its steps do not prove its claim's relation", ()
        assumed: list[str] = []
        for n, (previous, step) in enumerate(derivation.chain(), 1):
            rules = [r.unfolded(where) for r in resolve(step.by)]
            verdict = rule_check(unfold(previous, where), unfold(step.expr, where), rules,
                                 model, derivation.distinct, step.rel)
            if not verdict.passed:
                return (f"cited {derivation.name}: its step {n} fails under {model.name}: "
                        f"{verdict.reason}"), ()
            assumed.extend(verdict.assumes)
        if algebraically_equal(unfold(derivation.steps[-1].expr, where), self.rhs,
                               distinct=derivation.distinct) is not True:
            return f"cited {derivation.name}: its chain does not end at its claim's right side", ()
        return None, tuple(dict.fromkeys(assumed))

    def __repr__(self) -> str:
        return f"cite({self.derivation.name})"


def cite(derivation: Derivation) -> Cite:
    """Use the claim of ``derivation`` (proved in its own file) to justify a step."""
    return Cite(derivation)


__all__ = ["Cite", "cite"]
