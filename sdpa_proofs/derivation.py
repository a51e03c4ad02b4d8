"""Derivations: a claim and a chain of justified equalities, modelled on Lean's ``calc``.

    calc  lhs = e_1 := by rule_1
              _ = e_2 := by rule_2
              ...
              _ = rhs

is written

    Derivation(claim=Eq(lhs, rhs), steps=[Step(e_1, "rule_1", "why"), Step(e_2, ...), ...])

and holds when every step follows from the one before by its rules and the last is the claim's
right-hand side.  As in ``calc``, a step may carry ``≤`` or ``≥`` instead of ``=``
(``Step(e, "sum_at_least_max", rel="<=")``); the chain then proves the composed relation, which
must give the claim's (an ``Le``, ``Ge``, ``Lt`` or ``Gt`` instead of ``Eq``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp
from sympy import Expr

from .relations import CLAIMS, compose, relation_of

_PACKAGE_DIR = Path(__file__).resolve().parent

#: the models a derivation is checked under unless it names its own: the seed's independent
#: case, under four distribution families
DEFAULT_MODELS = ("independent-normal", "independent-uniform", "independent-rademacher",
                  "independent-laplace")


def _caller_location() -> tuple[str, int]:
    """The file and line of the first frame outside this package: where the user wrote it.

    Frames of generated code (a dataclass's __init__ lives in "<string>") are skipped too."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename == "<string>" or (
            not frame.f_code.co_filename.startswith("<")
            and Path(frame.f_code.co_filename).resolve().parent == _PACKAGE_DIR)):
        frame = frame.f_back
    if frame is None:
        return "<unknown>", 0
    return frame.f_code.co_filename, frame.f_lineno


def _default_name(file: str, title: str) -> str:
    """A derivation's name: its file's stem when it was written in a file of its own; written
    in a notebook cell or at a prompt, a name made from its title (else "derivation")."""
    path = Path(file)
    if not file.startswith("<") and path.suffix == ".py" and "ipykernel" not in file \
            and path.stem.isidentifier():
        return path.stem
    words = re.findall(r"[A-Za-z0-9]+", title.lower())
    return "_".join(words)[:40].strip("_") or "derivation"


@dataclass
class Step:
    """``= expr`` (or ``<= expr`` ... with ``rel``), justified by the rule(s) ``by``; ``why`` is
    the sentence a reader sees."""

    expr: Expr
    by: object = "algebra"  # a rule name, a rule object, or a list of either
    why: str = ""
    rel: str = "="
    file: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    def __post_init__(self):
        self.expr = sp.sympify(self.expr)
        self.rel = relation_of(self.rel)
        if not self.file:
            self.file, self.line = _caller_location()

    @property
    def rule_names(self) -> list[str]:
        return [r if isinstance(r, str) else repr(r) for r in justifications(self.by)]


@dataclass
class Derivation:
    """A claim with its proof.

    ``where`` holds abbreviations (S := sum_i q_i k_i), ``distinct`` pairs of free indices assumed
    different, ``models`` the models under which the claim is asserted (names or Model objects).
    ``expect_refuted_at=n`` marks a claim that is false (a slip being documented): it counts as
    a success only when, under every model, its first failing step is step n.
    """

    claim: sp.core.relational.Relational
    steps: list[Step]
    title: str = ""
    name: str = ""
    where: dict = field(default_factory=dict)
    distinct: Iterable = ()
    models: Sequence = DEFAULT_MODELS
    notes: str = ""
    expect_refuted_at: int | None = None
    file: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    def __post_init__(self):
        if not isinstance(self.claim, tuple(CLAIMS.values())):
            raise TypeError(f"the claim must be a relation Eq(lhs, rhs), Le, Lt, Ge or Gt, not "
                            f"{self.claim!r}" + (" (SymPy decided it already: write the sides "
                                                 "so that it stays unevaluated)"
                                                 if isinstance(self.claim, sp.logic.boolalg.
                                                               BooleanAtom) else ""))
        self.steps = list(self.steps)
        for n, step in enumerate(self.steps, 1):
            if not isinstance(step, Step):
                raise TypeError(f"step {n} is {step!r}, not a Step(expr, by, why)")
        self.distinct = frozenset(frozenset(pair) for pair in self.distinct)
        if not self.file:
            self.file, self.line = _caller_location()
        if not self.name:
            self.name = _default_name(self.file, self.title)
        if self.expect_refuted_at is not None and not 1 <= self.expect_refuted_at <= len(
                self.steps):
            raise ValueError(f"expect_refuted_at={self.expect_refuted_at}, but the derivation "
                             f"has {len(self.steps)} steps")

    @property
    def relation(self) -> str:
        """The claim's relation: "=", "<=", "<", ">=" or ">"."""
        return relation_of(self.claim.rel_op)

    def proves(self) -> str | None:
        """The relation the chain of steps proves between the claim's sides (None: none)."""
        return compose(step.rel for step in self.steps)

    def chain(self) -> list[tuple[Expr, Step]]:
        """(previous expression, step) for every step: the relations to check."""
        previous = [self.claim.lhs] + [s.expr for s in self.steps[:-1]]
        return list(zip(previous, self.steps))

    def _repr_latex_(self) -> str:
        from .latex import derivation_math

        return derivation_math(self)

    def verify(self, settings=None):
        """Check this derivation as ``sdpa-proofs verify`` checks a file (sealed, so that only
        what the checkers can read reaches them), under ``settings`` (a VerifySettings; the
        defaults: every check, Monte Carlo included).  The report shows itself in Jupyter.
        The engine is imported here, when asked for: the core itself imports none."""
        from .runner import verify_derivation

        return verify_derivation(self, settings)


def justifications(by) -> list:
    """The rules a step names, as a list: one name or rule object, or several."""
    if isinstance(by, (str, bytes)) or not isinstance(by, (list, tuple)):
        return [by]
    return list(by)
