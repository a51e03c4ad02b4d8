"""Running the checks: derivation -> checkers -> report."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy as sp
from sympy import Eq

from .algebra import algebraically_equal
from .budget import DEFAULT_BUDGET, within_budget
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
from .derivation import CLAIMS, SYMBOLS, Derivation, implies
from .expressions import is_random_coordinate, unfold
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
    budget: float | None = DEFAULT_BUDGET  # seconds for each check; None: unlimited
    allow_undecided: bool = False  # exit 0 even when checks stay undecided
    debug: bool = False  # let exceptions from a user's step propagate, with their traceback


class StepError(Exception):
    """A step that could not be checked at all: the message names file, line and step."""


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
    started = time.perf_counter()
    report, pending = _check_steps(derivation, settings, progress)
    _sample(pending, settings, progress)
    report.seconds = time.perf_counter() - started
    return report


def _check_steps(derivation: Derivation, settings: VerifySettings,
                 progress: Progress | None) -> tuple[DerivationReport, list[_PendingSample]]:
    report = DerivationReport(derivation.name, derivation.file, derivation.title,
                              f"{show(derivation.claim.lhs)} {SYMBOLS[derivation.relation]} "
                              f"{show(derivation.claim.rhs)}",
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
    claim = CLAIMS[derivation.relation](unfold(derivation.claim.lhs, where),
                                        unfold(derivation.claim.rhs, where), evaluate=False)
    pending = []
    for model in models:
        if progress:
            progress(f"{derivation.name} under {model.name}")
        problem = mismatch(derivation, model)
        if problem:
            report.error = problem
            return report, []
        try:
            report.models.append(_check_under(derivation, rules, model, settings, claim))
        except StepError as error:
            if settings.debug:
                raise
            report.error = str(error)
            return report, []
        except Exception as error:  # an exception in a user's step must not stop the run
            if settings.debug:
                raise
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


def mismatch(derivation: Derivation, model: Model) -> str | None:
    """Bad input that would otherwise surface as an undecided check: a random vector the model
    has no law for, a coordinate with other than one index, a sum over a vector's coordinates
    that does not run over 1..dimension.  Returns the message naming file, line and step."""
    where = derivation.where
    places = [(f"{derivation.file}:{derivation.line}: claim", e)
              for e in (derivation.claim.lhs, derivation.claim.rhs)]
    places += [(f"{step.file}:{step.line}: step {n}", step.expr)
               for n, step in enumerate(derivation.steps, 1)]
    for place, expr in places:
        expr = unfold(sp.sympify(expr), where)
        for coordinate in sorted(expr.atoms(sp.Indexed), key=sp.default_sort_key):
            if not is_random_coordinate(coordinate):
                if coordinate.base not in model.indexed_parameters:
                    return (f"{place}: {show(coordinate)} is neither a coordinate of a random "
                            f"vector nor a parameter of model {model.name}; an abbreviation "
                            f"needs where={{...}} (for p_i: where=softmax_abbreviations)")
                continue
            if coordinate.base not in model.vectors:
                return (f"{place}: model {model.name} has no law for the random vector "
                        f"{coordinate.base} (it knows {', '.join(map(str, model.vectors))})")
            if len(coordinate.indices) != 1:
                return (f"{place}: {show(coordinate)} has {len(coordinate.indices)} "
                        "indices; coordinates of a vector take one")
        for total in expr.atoms(sp.Sum):
            for index, lower, upper in total.limits:
                over_coordinates = any(index in c.indices for c in total.atoms(sp.Indexed)
                                       if is_random_coordinate(c))
                if over_coordinates and (lower != 1 or upper != model.dimension) \
                        and not (lower.is_Integer and upper.is_Integer):
                    return (f"{place}: the sum over {index} runs from {lower} to {upper}, but "
                            f"under {model.name} coordinates are indexed 1..{model.dimension}")
    return None


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
        distinct = derivation.distinct

        def budgeted(check, *args):
            return within_budget(lambda: check(*args), settings.budget,
                                 lambda why: Verdict(UNDECIDED, why))

        try:
            result.steps.append(StepReport(
                index=n, rule=" + ".join(step.rule_names), expression=show(step.expr),
                why=step.why, location=f"{step.file}:{step.line}", relation=step.rel,
                rule_check=budgeted(rule_check, before, after, step_rules, model, distinct,
                                    step.rel),
                exact_check=budgeted(exact_check, before, after, model, distinct, step.rel),
                numeric_check=budgeted(numeric_check, before, after, model, settings.numeric,
                                       distinct, step.rel)))
        except Exception as error:  # a user's rule or expression raised: name the step
            raise StepError(f"{step.file}:{step.line}: step {n}: "
                            f"{type(error).__name__}: {error}") from error
    result.conclusion = _conclusion(derivation, claim)
    return result


def _conclusion(derivation: Derivation, claim: Eq) -> Verdict:
    """The chain must end exactly at the claim's right-hand side, and the relations of its steps
    must compose to the claim's."""
    if not derivation.steps:
        return Verdict(FAIL, "the derivation has no steps")
    proved, claimed = derivation.proves(), derivation.relation
    if proved is None:
        return Verdict(FAIL, "the steps go both ways (some ≤, some ≥), so the chain relates "
                             "nothing: " + " ".join(SYMBOLS[s.rel] for s in derivation.steps))
    if not implies(proved, claimed):
        return Verdict(FAIL, f"the steps prove lhs {SYMBOLS[proved]} rhs, which does not give "
                             f"the claimed lhs {SYMBOLS[claimed]} rhs")
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
    run = RunReport(allow_undecided=settings.allow_undecided)
    pending: list[_PendingSample] = []
    for item in load_paths(paths):
        if isinstance(item, LoadError):
            run.derivations.append(DerivationReport(name=item.file, file=item.file,
                                                    error=f"{item.file}: {item.message}"))
            continue
        started = time.perf_counter()
        report, samples = _check_steps(item, settings, progress)
        report.seconds = time.perf_counter() - started
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
