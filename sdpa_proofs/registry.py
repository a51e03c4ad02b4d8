"""The built-in rules: the trusted base of the rule check, by name, read-only.

A step names a built-in rule by its name; a rule object of the user's own making is user code,
and a proof that rests on it says so (see :mod:`sdpa_proofs.sealing`).
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from .bounds import BOUND_RULES
from .derivation import justifications
from .rules import EQUALITY_RULES, Rule

RULES = MappingProxyType({rule.name: rule for rule in EQUALITY_RULES + BOUND_RULES})


class UnknownRule(KeyError):
    """A step names a rule the registry does not hold."""


def is_builtin(rule: object) -> bool:
    """Whether ``rule`` is the registry's own object for its name (not a look-alike)."""
    return isinstance(rule, Rule) and RULES.get(getattr(rule, "name", None)) is rule


def resolve(by: str | Rule | Iterable) -> list[Rule]:
    """The rules a step names: one name, one Rule, or several of either."""
    resolved = []
    for item in justifications(by):
        if isinstance(item, Rule):
            resolved.append(item)
        elif isinstance(item, str) and item in RULES:
            resolved.append(RULES[item])
        else:
            raise UnknownRule(f"unknown rule {item!r}; known rules: {', '.join(RULES)}, "
                              "lemma(...), cite(...)")
    return resolved
