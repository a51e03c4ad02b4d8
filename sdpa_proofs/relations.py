"""Relations between the two ends of a step or a claim: =, <=, <, >=, > and how they compose."""

from __future__ import annotations

from collections.abc import Iterable

from sympy import Eq, Ge, Gt, Le, Lt

CLAIMS = {"=": Eq, "<=": Le, "<": Lt, ">=": Ge, ">": Gt}
_SPELLINGS = {"==": "=", "≤": "<=", "≥": ">=", "=<": "<=", "=>": ">="}
SYMBOLS = {"=": "=", "<=": "≤", "<": "<", ">=": "≥", ">": ">"}


def relation_of(spelling: str) -> str:
    """The canonical name ("=", "<=", "<", ">=", ">") of a relation however it is written."""
    relation = _SPELLINGS.get(spelling, spelling)
    if relation not in CLAIMS:
        raise ValueError(f"unknown relation {spelling!r}; use one of =, <=, <, >=, >")
    return relation


def compose(relations: Iterable[str]) -> str | None:
    """The relation a chain proves between its two ends (a = b <= c < e gives a < e), or None
    when steps go both ways (a <= b >= c proves nothing about a and c)."""
    relations = list(relations)
    directions = {r[0] for r in relations if r != "="}
    if len(directions) > 1:
        return None
    if not directions:
        return "="
    direction = directions.pop()
    return direction if direction in relations else direction + "="


def implies(proved: str, claimed: str) -> bool:
    """Whether ``a proved b`` gives ``a claimed b``."""
    return proved == claimed or (claimed in ("<=", ">=") and proved in ("=", claimed[0]))


def upward(relation: str) -> int:
    """+1 for a step that goes up (<=, <), -1 for one that goes down."""
    return 1 if relation in ("<=", "<") else -1
