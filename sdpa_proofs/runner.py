"""Running the checks: derivation -> checkers -> report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sympy import Eq

from .algebra import algebraically_equal
from .checks import (
    FAIL,
    PASS,
    UNDECIDED,
    NumericSettings,
    Verdict,
    exact_check,
    numeric_check,
    rule_check,
)
from .derivation import Derivation
from .expressions import unfold
from .loader import LoadError, discover, load_file
from .models import Model, get_model
from .montecarlo import DIMENSIONS, MonteCarloResult, check_claim
from .report import DerivationReport, ModelReport, RunReport, StepReport
from .rules import UnknownRule, resolve
from .text import show

Progress = Callable[[str], None]


@dataclass
class VerifySettings:
    numeric: NumericSettings = field(default_factory=NumericSettings)
    models: list[str] | None = None  # check under these instead of the derivation's own
    monte_carlo: bool = True
    monte_carlo_dimensions: tuple[int, ...] = DIMENSIONS


@dataclass
class _PendingSample:
    """A claim still to be backed by Monte Carlo, kept so that runs can group them by model."""

    report: ModelReport
    model: Model
    claim: Eq


def verify_derivation(derivation: Derivation, settings: VerifySettings | None = None,
                      progress: Progress | None = None) -> DerivationReport:
    """Check every step of ``derivation`` under each of its models, then sample its claim."""
    settings = settings or VerifySettings()
    report, pending = _check_steps(derivation, settings, progress)
    _sample(pending, settings, progress)
    return report


def _check_steps(derivation: Derivation, settings: VerifySettings,
                 progress: Progress | None) -> tuple[DerivationReport, list[_PendingSample]]:
    report = DerivationReport(derivation.name, derivation.file, derivation.title,
                              f"{show(derivation.claim.lhs)} = {show(derivation.claim.rhs)}",
                              expected_refuted_at=derivation.expect_refuted_at)
    try:
        models = [get_model(m) for m in settings.models] if settings.models \
            else derivation.model_objects
    except KeyError as error:
        report.error = f"{derivation.file}:{derivation.line}: {error.args[0]}"
        return report, []
    try:
        rules = [[r.unfolded(derivation.where) for r in resolve(step.by)]
                 for step in derivation.steps]
    except UnknownRule as error:
        step_number, step = next((n, s) for n, s in enumerate(derivation.steps, 1)
                                 if _names_unknown_rule(s))
        report.error = f"{step.file}:{step.line}: step {step_number}: {error.args[0]}"
        return report, []
    where = derivation.where
    claim = Eq(unfold(derivation.claim.lhs, where), unfold(derivation.claim.rhs, where),
               evaluate=False)
    pending = []
    for model in models:
        if progress:
            progress(f"{derivation.name} under {model.name}")
        try:
            report.models.append(_check_under(derivation, rules, model, settings, claim))
        except Exception as error:  # an exception in a user's step must not stop the run
            report.error = f"{derivation.file}:{derivation.line}: {type(error).__name__}: {error}"
            return report, []
        if not derivation.distinct:  # a statement about generic indices has nothing to sample
            pending.append(_PendingSample(report.models[-1], model, claim))
    return report, pending


def _sample(pending: list[_PendingSample], settings: VerifySettings,
            progress: Progress | None) -> None:
    """Monte Carlo for every pending claim, model by model so that samples are reused."""
    if not settings.monte_carlo:
        return
    for item in sorted(pending, key=lambda p: p.model.name):
        if progress:
            progress(f"Monte Carlo for {show(item.claim.lhs)} under {item.model.name}")
        try:
            item.report.monte_carlo = check_claim(item.claim, item.model,
                                                  settings.monte_carlo_dimensions)
        except Exception as error:  # sampling a user's claim must not stop the run
            item.report.monte_carlo = [MonteCarloResult(
                0, 0, *[float("nan")] * 4, UNDECIDED,
                f"Monte Carlo could not run: {type(error).__name__}: {error}")]


def _names_unknown_rule(step) -> bool:
    try:
        resolve(step.by)
    except UnknownRule:
        return True
    return False


def _check_under(derivation: Derivation, rules: list, model: Model,
                 settings: VerifySettings, claim: Eq) -> ModelReport:
    where = derivation.where
    result = ModelReport(model.name)
    for n, ((previous, step), step_rules) in enumerate(zip(derivation.chain(), rules), 1):
        before, after = unfold(previous, where), unfold(step.expr, where)
        result.steps.append(StepReport(
            index=n, rule=" + ".join(step.rule_names), expression=show(step.expr),
            why=step.why, location=f"{step.file}:{step.line}",
            rule_check=rule_check(before, after, step_rules, model, derivation.distinct),
            exact_check=exact_check(before, after, model, derivation.distinct),
            numeric_check=numeric_check(before, after, model, settings.numeric,
                                        derivation.distinct)))
    result.conclusion = _conclusion(derivation, claim)
    return result


def _conclusion(derivation: Derivation, claim: Eq) -> Verdict:
    """The chain must end exactly at the claim's right-hand side."""
    if not derivation.steps:
        return Verdict(FAIL, "the derivation has no steps")
    last = unfold(derivation.steps[-1].expr, derivation.where)
    equal = algebraically_equal(last, claim.rhs)
    if equal:
        return Verdict(PASS)
    status = UNDECIDED if equal is None else FAIL
    return Verdict(status, f"the chain ends at {show(derivation.steps[-1].expr)}, but the claim's "
                           f"right-hand side is {show(derivation.claim.rhs)}")


def verify_paths(paths: list[str], settings: VerifySettings | None = None,
                 progress: Progress | None = None) -> RunReport:
    """Load every derivation under ``paths`` and check each; bad files become error entries."""
    settings = settings or VerifySettings()
    run = RunReport()
    pending: list[_PendingSample] = []
    for item in load_paths(paths):
        if isinstance(item, LoadError):
            run.derivations.append(DerivationReport(name=item.file, file=item.file,
                                                    error=f"{item.file}: {item.message}"))
            continue
        report, samples = _check_steps(item, settings, progress)
        run.derivations.append(report)
        pending.extend(samples)
    _sample(pending, settings, progress)
    return run


def load_paths(paths: list[str]) -> list[Derivation | LoadError]:
    files, errors = discover(paths)
    items: list[Derivation | LoadError] = list(errors)
    for path in files:
        loaded = load_file(path)
        items.extend([loaded] if isinstance(loaded, LoadError) else loaded)
    return items
