"""The rule check: the named rules, applied under the model's assumptions, turn one side of a
step into the other (up to plain algebra); for an inequality, the rules' bounds, used where they
move the whole the right way, lead from one side to the other (see :mod:`sdpa_proofs.bounds`)."""

from __future__ import annotations

from sympy import Expr

from .algebra import algebraically_equal
from .bounds import bound_check
from .errors import UnsupportedExpression
from .models import Model
from .plainstep import check_plain
from .relations import relation_of
from .rules import Context, Rule, rewrite_everywhere
from .text import show
from .verdicts import FAIL, PASS, UNDECIDED, Verdict


def rule_check(before: Expr, after: Expr, rules: list[Rule], model: Model,
               distinct: frozenset = frozenset(), relation: str = "=") -> Verdict:
    """Does rewriting with ``rules`` (everywhere, to a fixpoint) make the two sides equal?  For
    an inequality: do the rules' bounds, used where they move the whole the right way, lead
    from one side to the other (see :mod:`sdpa_proofs.bounds`)?"""
    relation = relation_of(relation)  # "==" is =, not a bound
    return check_plain(lambda b, a, plain_model, numbers: _rule_check(
        b, a, rules, plain_model, distinct, relation, numbers), before, after, model)


def _rule_check(before: Expr, after: Expr, rules: list[Rule], model: Model,
                distinct: frozenset, relation: str, numbers: dict) -> Verdict:
    if relation != "=":
        ctx = Context(model, distinct, numbers=numbers)
        verdict = bound_check(before, after, relation, rules, ctx)
        return _resting_on(verdict, ctx)
    strict = Context(model, distinct, strict=True, numbers=numbers)
    try:
        reached = rewrite_everywhere(before, rules, strict)
        target = rewrite_everywhere(after, rules, strict)
    except UnsupportedExpression as error:  # a rule that cannot decide its own condition
        return Verdict(UNDECIDED, str(error))
    equal = algebraically_equal(reached, target, numbers=numbers, distinct=distinct)
    if equal:
        return _resting_on(Verdict(PASS), strict)
    loose = Context(model, distinct, strict=False, numbers=numbers)
    try:
        loosely = [rewrite_everywhere(side, rules, loose) for side in (before, after)]
    except UnsupportedExpression as error:
        return Verdict(UNDECIDED, str(error))
    if algebraically_equal(*loosely, numbers=numbers, distinct=distinct) and loose.violations:
        return Verdict(FAIL, "precondition fails under the model: " + "; ".join(loose.violations))
    names = ", ".join(r.name for r in rules)
    if equal is None:
        return Verdict(UNDECIDED, f"could not decide whether {names} turns {show(reached)} "
                                  f"into {show(target)}")
    if names == "algebra":  # it rewrites nothing: the sides are compared as they stand
        return Verdict(FAIL, f"{show(reached)} is not algebraically {show(target)}")
    if reached == before:  # say why the rule left it alone, where a precondition said so
        why = "; ".join(dict.fromkeys(strict.violations + loose.violations + strict.declined))
        return Verdict(FAIL, f"{names} applies nowhere in the previous expression "
                             f"{show(before)}" + (f" ({why})" if why else "")
                             + f", which is not {show(target)}")
    return Verdict(FAIL, f"{names} turns the previous expression into {show(reached)}, "
                         f"which is not {show(target)}")


def _resting_on(verdict: Verdict, ctx: Context) -> Verdict:
    """A pass that used lemmas or citations says so."""
    if verdict.passed and ctx.assumed:
        verdict.assumes = tuple(dict.fromkeys(ctx.assumed))
    return verdict
