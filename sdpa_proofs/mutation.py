"""Mutation testing of the checker itself: break a verified derivation in small ways and
require every mutant that changes the mathematics to be rejected.

Mutations of a step: a number +1, a sum's last term negated, an exponent +1, a summation (or
maximum) bound d -> d - 1, the named rule swapped, i = j / i != j exchanged (a sum over i != j
made a full double sum and back), and an inequality turned round (<= for >=).  A mutant that
survives is *equivalent* only when the mutated step has the
same exact value as the original under the model and its rules still justify it; any other
survivor is a hole in the checker.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import sympy as sp
from sympy import Add, Expr, Pow, Sum

from .derivation import Derivation, Step
from .exactcheck import exact_check
from .expressions import MaxOver, SumOverDistinct, unfold
from .models import resolve_models
from .numeric import NumericSettings
from .registry import resolve
from .relations import CLAIMS, relation_of
from .report import SUCCESS
from .rulecheck import rule_check
from .runner import VerifySettings, verify_derivation


@dataclass
class Mutant:
    derivation: Derivation
    step: int
    kind: str
    description: str
    original: Derivation


@dataclass
class MutationResult:
    mutant: Mutant
    killed: bool
    equivalent_because: str = ""


@dataclass
class MutationReport:
    results: list[MutationResult] = field(default_factory=list)

    @property
    def killed(self) -> list[MutationResult]:
        return [r for r in self.results if r.killed]

    @property
    def equivalent(self) -> list[MutationResult]:
        return [r for r in self.results if not r.killed and r.equivalent_because]

    @property
    def survivors(self) -> list[MutationResult]:
        """Surviving mutants that are not shown equivalent: holes in the checker."""
        return [r for r in self.results if not r.killed and not r.equivalent_because]

    @property
    def kill_rate(self) -> float:
        relevant = len(self.results) - len(self.equivalent)
        return len(self.killed) / relevant if relevant else 1.0


def _replace_node(expr: Expr, target: Expr, new: Expr) -> Expr:
    """Replace one occurrence (the first in pre-order) of ``target``."""
    done = [False]

    def walk(node: Expr) -> Expr:
        if done[0]:
            return node
        if node is target or (node == target and not done[0] and node.args == target.args):
            done[0] = True
            return new
        if not node.args:
            return node
        return node.func(*(walk(a) for a in node.args))

    return walk(expr)


def expression_mutants(expr: Expr) -> Iterator[tuple[str, str, Expr]]:
    """(kind, description, mutated expression) for every single-site mutation of ``expr``."""
    seen = set()

    def emit(kind, description, mutated):
        if mutated != expr and (kind, mutated) not in seen:
            seen.add((kind, mutated))
            yield kind, description, mutated

    for node in sp.preorder_traversal(expr):
        if isinstance(node, (sp.Tuple, sp.Indexed)):
            continue
        if node.is_Integer or (node.is_Rational and not node.is_Integer):
            yield from emit("number", f"{node} -> {node + 1}", _replace_node(expr, node, node + 1))
        if isinstance(node, Add):
            *rest, last = node.args
            yield from emit("operator", f"+ {last} -> - {last}",
                            _replace_node(expr, node, Add(*rest) - last))
        if isinstance(node, Pow) and node.exp.is_Integer:
            yield from emit("exponent", f"{node} -> power {node.exp + 1}",
                            _replace_node(expr, node, Pow(node.base, node.exp + 1)))
        if isinstance(node, Sum):
            index, lower, upper = node.limits[-1]
            limits = node.limits[:-1] + ((index, lower, upper - 1),)
            yield from emit("bound", f"sum over {index} up to {upper - 1}",
                            _replace_node(expr, node, Sum(node.function, *limits)))
            if len(node.limits) == 2 and node.limits[0][1:] == node.limits[1][1:]:
                (j, _, _), (i, _, n) = node.limits
                yield from emit("i=j/i!=j", "sum over all (i, j) -> i != j",
                                _replace_node(expr, node, SumOverDistinct(node.function, i, j, n)))
        if isinstance(node, MaxOver):
            (index, lower, upper), = node.limits
            yield from emit("bound", f"max over {index} up to {upper - 1}",
                            _replace_node(expr, node, MaxOver(node.function,
                                                              (index, lower, upper - 1))))
        if isinstance(node, SumOverDistinct):
            i, j = node.indices
            yield from emit("i=j/i!=j", "sum over i != j -> all (i, j)",
                            _replace_node(expr, node, Sum(node.function, (j, 1, node.upper),
                                                          (i, 1, node.upper))))


def _other_rule(step: Step) -> str:
    return "algebra" if step.rule_names != ["algebra"] else "linearity"


def mutants(derivation: Derivation) -> Iterator[Mutant]:
    for n, step in enumerate(derivation.steps, 1):
        for kind, description, mutated in expression_mutants(step.expr):
            steps = list(derivation.steps)
            steps[n - 1] = replace(step, expr=mutated)
            yield Mutant(replace(derivation, steps=steps), n, kind, description, derivation)
        steps = list(derivation.steps)
        steps[n - 1] = replace(step, by=_other_rule(step))
        yield Mutant(replace(derivation, steps=steps), n, "rule",
                     f"{' + '.join(step.rule_names)} -> {_other_rule(step)}", derivation)
        if step.rel != "=":
            turned = _TURNED[step.rel]
            steps = list(derivation.steps)
            steps[n - 1] = replace(step, rel=turned)
            yield Mutant(replace(derivation, steps=steps, claim=_turn(derivation.claim)), n,
                         "relation", f"{step.rel} -> {turned} (and the claim with it)",
                         derivation)


_TURNED = {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}


def _turn(claim):
    """The claim with its inequality turned round, so that only the step's check can object."""
    return CLAIMS[_TURNED.get(relation_of(claim.rel_op), "=")](claim.lhs, claim.rhs)


def _equivalence(mutant: Mutant) -> str:
    """Why a surviving mutant is harmless, or "" if it is not shown to be."""
    model = resolve_models(mutant.original.models)[0]
    where = mutant.original.where
    original = mutant.original.steps[mutant.step - 1]
    changed = mutant.derivation.steps[mutant.step - 1]
    before, after = unfold(original.expr, where), unfold(changed.expr, where)
    if exact_check(before, after, model, mutant.original.distinct).status != "pass":
        return ""
    previous = unfold(([mutant.original.claim.lhs] + [s.expr for s in mutant.original.steps])
                      [mutant.step - 1], where)
    rules = [r.unfolded(where) for r in resolve(changed.by)]
    if rule_check(previous, after, rules, model, mutant.original.distinct,
                  changed.rel).status != "pass":
        return ""
    if mutant.kind == "rule":
        return "the step needs only what the new rule also allows (plain algebra is always " \
               "available), so the justification still holds"
    return "the mutated expression has the same exact value under the model and its rule " \
           "still justifies it"


def run_mutation(derivations: list[Derivation], settings: VerifySettings | None = None,
                 progress=None) -> MutationReport:
    """Verify every mutant, without Monte Carlo, under the models of ``settings`` or else each
    derivation's first model."""
    settings = settings or VerifySettings(monte_carlo=False,
                                          numeric=NumericSettings(dimensions=(1, 2, 3)))
    report = MutationReport()
    for derivation in derivations:
        if derivation.expect_refuted_at is not None:
            continue  # already a false claim: mutating it tests nothing
        models = settings.models or [resolve_models(derivation.models)[0].name]
        for mutant in mutants(derivation):
            if progress:
                progress(f"{derivation.name} step {mutant.step}: {mutant.description}")
            checked = verify_derivation(mutant.derivation,
                                        replace(settings, models=models, monte_carlo=False))
            killed = checked.status not in SUCCESS
            report.results.append(MutationResult(
                mutant, killed, "" if killed else _equivalence(mutant)))
    return report
