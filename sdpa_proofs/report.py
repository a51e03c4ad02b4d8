"""What a verification run found: plain data, produced by the runner, read by the renderers."""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .verdicts import (
    FAIL,
    NOT_APPLICABLE,
    PASS,
    UNDECIDED,
    MonteCarloResult,
    Verdict,
    combine,
)

VERIFIED, FAILED, ERROR = "verified", "failed", "error"
#: the progress line of one model's Monte Carlo, its reports holding that model alone
SAMPLED = "Monte Carlo under {model}"
REFUTED = "refuted"  # an expected refutation: the derivation fails exactly where it is meant to
ASSUMING = "verified_assuming"  # verified, but a step's only proof for every d rests on assumptions
INTERNAL = "internal_error"  # the toolkit failed: a bug of ours, not the user's input
SUCCESS = (VERIFIED, REFUTED)


@dataclass
class StepReport:
    index: int
    rule: str
    expression: str
    why: str
    location: str
    rule_check: Verdict
    exact_check: Verdict
    numeric_check: Verdict
    relation: str = "="  # how this step's expression relates to the one before

    @property
    def symbolic(self) -> Verdict:
        return combine(self.rule_check, self.exact_check)

    @property
    def passed(self) -> bool:
        return self.symbolic.passed and self.numeric_check.passed

    @property
    def rests_on_assumptions(self) -> bool:
        """The rule check, the proof of the step, rests on a user rule or a lemma.  The exact
        check does not make up for it: a lemma is established by the same exact engine, so the
        step would have one proof, not two independent ones."""
        return bool(self.rule_check.assumes)


@dataclass
class ModelReport:
    model: str
    steps: list[StepReport] = field(default_factory=list)
    conclusion: Verdict = field(default_factory=lambda: Verdict(PASS))
    monte_carlo: list[MonteCarloResult] = field(default_factory=list)

    @property
    def first_failing_step(self) -> int | None:
        """The first step with a check that did not pass."""
        return next((s.index for s in self.steps if not s.passed), None)

    @property
    def status(self) -> str:
        statuses = [s.symbolic.status for s in self.steps] + \
                   [s.numeric_check.status for s in self.steps] + \
                   [self.conclusion.status] + [r.status for r in self.monte_carlo]
        if FAIL in statuses:
            return FAILED
        return UNDECIDED if UNDECIDED in statuses else VERIFIED


def _cell(text: str) -> str:
    """Text inside a Markdown table cell: a bar would end the cell, a backtick the code."""
    return str(text).replace("|", "\\|").replace("`", "'")


#: the version of the JSON report's layout; raised whenever a field changes meaning or goes
JSON_SCHEMA = 1


@dataclass
class DerivationReport:
    name: str
    file: str
    title: str = ""
    claim: str = ""
    claim_latex: str = ""  # the claim as LaTeX, abbreviations kept
    claim_srepr: str = ""  # the claim as SymPy's srepr, which sympify reads back exactly
    models: list[ModelReport] = field(default_factory=list)
    error: str = ""
    expected_refuted_at: int | None = None  # the step at which the claim is meant to fail
    seconds: float = 0.0  # time spent checking it
    definitions: list[str] = field(default_factory=list)  # the abbreviations, "S = ..."
    hypotheses: list[str] = field(default_factory=list)  # "i ≠ j"
    # declared on parameters, "c > 0", and where its divisors are not 0, "c ≠ 2"
    conditions: list[str] = field(default_factory=list)
    conditions_latex: list[str] = field(default_factory=list)  # the same, as LaTeX
    assumptions: list[str] = field(default_factory=list)  # beyond the trusted base
    internal: str = ""  # the traceback of an internal error
    timed_out: str = ""  # the checking worker was stopped at its deadline

    @property
    def status(self) -> str:
        if self.internal:
            return INTERNAL
        if self.error:
            return ERROR
        if self.timed_out:
            return UNDECIDED
        if self.expected_refuted_at is not None:
            return REFUTED if self.refuted_as_expected else FAILED
        statuses = [m.status for m in self.models]
        for status in (FAILED, UNDECIDED):
            if status in statuses:
                return status
        if any(s.rests_on_assumptions for m in self.models for s in m.steps):
            return ASSUMING
        return VERIFIED

    def __repr__(self) -> str:
        return f"<DerivationReport {self.name}: {self.status}>"

    def _repr_markdown_(self) -> str:
        """How a report shows itself in Jupyter: title, claim, status, what it rests on, and
        every step's checks under each model."""
        lines = [f"**{self.name}**: {self.status.replace('_', ' ')}"
                 + (f" — {self.title}" if self.title else ""), ""]
        if self.claim:
            lines.append(f"Claim: `{self.statement}`")
        if self.error:
            lines.append(f"Error: `{self.error}`")
        for assumption in self.assumptions:
            lines.append(f"Rests on: {_cell(assumption)}")
        for model in self.models:
            lines += ["", f"Under `{model.model}`: {model.status}", "",
                      "| step | expression | by | rule | exact | numeric |",
                      "| --- | --- | --- | --- | --- | --- |"]
            lines += [f"| {s.index} | `{_cell(s.expression)}` | {_cell(s.rule)} | "
                      f"{s.rule_check.status} | {s.exact_check.status} | "
                      f"{s.numeric_check.status} |" for s in model.steps]
            sampled = [r for r in model.monte_carlo if r.status != NOT_APPLICABLE]
            if sampled:
                lines.append("")
                lines.append("Monte Carlo: " + "; ".join(
                    f"{r.dimension} = {r.d}: {r.estimate:.6g} [{r.ci_low:.6g}, "
                    f"{r.ci_high:.6g}] {r.status}" for r in sampled))
        return "\n".join(lines)

    @property
    def assumed_steps(self) -> list[int]:
        """The steps whose only proof for every d rests on an assumption."""
        return sorted({s.index for m in self.models for s in m.steps if s.rests_on_assumptions})

    @property
    def statement(self) -> str:
        """The claim as checked: with its abbreviations, its hypotheses and the conditions its
        parameters were declared with."""
        parts = [self.claim]
        if self.definitions:
            parts.append("where " + ", ".join(self.definitions))
        if self.hypotheses or self.conditions:
            parts.append("for " + ", ".join(self.hypotheses + self.conditions))
        return "; ".join(p for p in parts if p)

    @property
    def refuted_as_expected(self) -> bool:
        """Under every model the first failing check is at the expected step, and it fails
        (a step left undecided there does not refute anything)."""
        return bool(self.models) and all(
            m.first_failing_step == self.expected_refuted_at
            and FAIL in (m.steps[self.expected_refuted_at - 1].symbolic.status,
                         m.steps[self.expected_refuted_at - 1].numeric_check.status)
            for m in self.models)

    @property
    def claim_held(self) -> bool:
        """Monte Carlo sampled the claim and found it true everywhere: a refuted step then
        documents a wrong step towards a true claim, not a false claim."""
        sampled = [r for m in self.models for r in m.monte_carlo if r.status != NOT_APPLICABLE]
        return bool(sampled) and all(r.status == PASS for r in sampled)

    @property
    def expected(self) -> str:
        if self.expected_refuted_at is None:
            return VERIFIED
        return f"refuted at step {self.expected_refuted_at}"

    def worst_step(self, index: int, aspect: str) -> Verdict:
        """The weakest verdict on step ``index`` over all models (``aspect``: "symbolic" or
        "numeric_check")."""
        return combine(*(getattr(m.steps[index], aspect) for m in self.models))

    @property
    def step_count(self) -> int:
        return len(self.models[0].steps) if self.models else 0


@dataclass
class RunReport:
    derivations: list[DerivationReport] = field(default_factory=list)

    allow_undecided: bool = False
    strict: bool = False  # "verified, assuming" fails the run

    @property
    def exit_code(self) -> int:
        """0 all verified, 1 a step failed (or stayed undecided, unless allowed; or rests on an
        assumption, with strict), 2 bad input, 3 an internal error."""
        statuses = {d.status for d in self.derivations}
        if INTERNAL in statuses:
            return 3
        if ERROR in statuses:
            return 2
        accepted = set(SUCCESS) | ({UNDECIDED} if self.allow_undecided else set()) | \
            (set() if self.strict else {ASSUMING})
        return 1 if statuses - accepted else 0

    def to_json(self) -> dict:
        return {"schema": JSON_SCHEMA,
                "derivations": [_derivation_json(d) for d in self.derivations],
                "summary": {"derivations": len(self.derivations),
                            "verified": sum(d.status == VERIFIED for d in self.derivations),
                            "verified_assuming": sum(d.status == ASSUMING
                                                     for d in self.derivations),
                            "refuted_as_expected": sum(d.status == REFUTED
                                                       for d in self.derivations),
                            "steps": sum(d.step_count for d in self.derivations),
                            "failed": sum(d.status in (FAILED, UNDECIDED)
                                          for d in self.derivations),
                            "errors": sum(d.status == ERROR for d in self.derivations),
                            "internal_errors": sum(d.status == INTERNAL
                                                   for d in self.derivations),
                            "exit_code": self.exit_code}}


def _verdict_json(v: Verdict) -> dict:
    return {k: list(val) if isinstance(val, tuple) else val for k, val in asdict(v).items()
            if val not in (None, "", ())}


def finite_row(row: dict) -> dict:
    """JSON has no NaN or infinity: an estimate that could not be made, or that overflowed, is
    null (in nested dicts and lists too)."""
    return {k: _finite(v) for k, v in row.items()}


def _finite(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return finite_row(value)
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _step_json(d: DerivationReport, n: int) -> dict:
    first = d.models[0].steps[n]
    symbolic, numeric = d.worst_step(n, "symbolic"), d.worst_step(n, "numeric_check")
    return {"index": first.index, "rule": first.rule, "relation": first.relation,
            "expression": first.expression,
            "why": first.why, "location": first.location,
            "symbolic": symbolic.status, "numeric": numeric.status, "digits": numeric.digits,
            "reason": symbolic.reason or numeric.reason or None}


def _derivation_json(d: DerivationReport) -> dict:
    return {
        "name": d.name, "file": d.file, "title": d.title, "claim": d.claim,
        "claim_latex": d.claim_latex, "claim_srepr": d.claim_srepr, "status": d.status,
        "where": d.definitions, "distinct": d.hypotheses, "conditions": d.conditions,
        "assumptions": d.assumptions,
        "assumed_steps": d.assumed_steps, "claim_held_in_monte_carlo": d.claim_held,
        "expected": d.expected,
        "error": d.error or d.timed_out or None,
        "traceback": d.internal or None,
        "steps": [_step_json(d, n) for n in range(d.step_count)],
        "models": [{"model": m.model, "status": m.status,
                    "conclusion": _verdict_json(m.conclusion),
                    "steps": [{"index": s.index, "rule": s.rule,
                               "rule_check": _verdict_json(s.rule_check),
                               "exact_check": _verdict_json(s.exact_check),
                               "numeric_check": _verdict_json(s.numeric_check)}
                              for s in m.steps],
                    "monte_carlo": [finite_row(asdict(r)) for r in m.monte_carlo]}
                   for m in d.models]}


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a failed run leaves no half-written file.  The
    folder must exist: a mistyped path is an error, not a new folder."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o666 & ~_umask())  # as open() would make it, not mkstemp's 0600
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(report: RunReport, path: Path) -> None:
    write_atomically(path, json.dumps(_finite(report.to_json()), indent=2, allow_nan=False,
                                      ensure_ascii=False).encode("utf-8", "replace").decode()
                     + "\n")


def _finite(data):
    """Every non-finite number in a report (digits, estimates) as null, however deep."""
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(v) for v in data]
    if isinstance(data, float) and not math.isfinite(data):
        return None
    return data
