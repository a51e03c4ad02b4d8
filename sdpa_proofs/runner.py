"""Running the checks: sealed derivation -> checkers -> report.

The checkers never see a derivation's file: they get it sealed (see :mod:`sdpa_proofs.sealing`)
and rebuilt from the trusted vocabulary.  The runner alone knows all four checkers; it asks the
exact check to establish each lemma, so that the rule check, which rewrites with lemmas, does
not itself depend on the exact engine.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from functools import partial

import sympy as sp

from .algebra import algebraically_equal, unshared_pole, unshared_pole_for_any_values
from .budget import DEFAULT_BUDGET, within_budget
from .citations import Cite
from .derivation import Derivation
from .errors import BadInput
from .exactcheck import exact_check, moment_divisor_conditions
from .expressions import unfold
from .latex import to_latex
from .models import MODELS, Model, get_model, resolve_models
from .montecarlo import DIMENSIONS, about_generic_indices, check_claims
from .numeric import NumericSettings, numeric_check
from .registry import resolve
from .relations import CLAIMS, SYMBOLS, implies
from .report import DerivationReport, ModelReport, StepReport
from .rulecheck import rule_check
from .rules import Lemma
from .sealing import UserRule, seal, unseal, user_code_steps
from .text import printable, show
from .validation import claim_conditions, claim_expressions, fits_model, validate
from .verdicts import FAIL, PASS, UNDECIDED, MonteCarloResult, Verdict

Progress = Callable[[str], None]


@dataclass
class VerifySettings:
    numeric: NumericSettings = field(default_factory=NumericSettings)
    models: list[str] | None = None  # check under these instead of the derivation's own
    monte_carlo: bool = True
    monte_carlo_dimensions: tuple[int, ...] = DIMENSIONS
    budget: float | None = DEFAULT_BUDGET  # seconds for each check; None: unlimited
    allow_undecided: bool = False  # exit 0 even when checks stay undecided
    strict: bool = False  # a proof that rests on assumptions fails the run
    debug: bool = False  # keep tracebacks of exceptions in derivation files
    jobs: int | None = None  # worker processes (None: one per core)
    memory: float | None = 8.0  # GiB of address space each worker may use; None: no cap
    sample_later: bool = False  # leave Monte Carlo to a sampler that draws once for all
    #                             derivations (see claims_to_sample)


class InternalError(Exception):
    """An exception inside the toolkit's own checks: a bug of ours, never the user's input."""


def verify_derivation(derivation: Derivation, settings: VerifySettings | None = None,
                      progress: Progress | None = None) -> DerivationReport:
    """Check a derivation built in this process (a notebook, a test) exactly as a file's is:
    sealed and rebuilt, so that only what the checkers can read reaches them.  The rule checks
    of rules of the user's own code run here, beside the code that made them."""
    settings = settings or VerifySettings()
    try:
        sealed = seal(derivation)
        sealed["user_verdicts"] = user_rule_verdicts(derivation, sealed, settings)
    except BadInput as error:
        return DerivationReport(printable(derivation.name), printable(derivation.file),
                                error=str(error))
    return check_sealed(sealed, settings, progress)


def user_rule_verdicts(derivation: Derivation, sealed: dict,
                       settings: VerifySettings) -> dict:
    """{step: {model: verdict}} for the steps whose rules are the user's own code.  This runs
    that code, so it belongs beside the derivation's file, never in the checking process; its
    verdicts come back as data, marked as resting on the user's rule."""
    steps = user_code_steps(sealed)
    if not steps:
        return {}
    models = [get_model(m) for m in settings.models] if settings.models \
        else resolve_models(derivation.models)
    where, chain = derivation.where, derivation.chain()
    verdicts: dict = {}
    for n in steps:
        previous, step = chain[n - 1]
        rules = [r.unfolded(where) for r in resolve(step.by)]
        before, after = unfold(previous, where), unfold(step.expr, where)
        for model in models:
            establish_lemmas(rules, model, settings)
            check = partial(rule_check, before, after, rules, model, derivation.distinct,
                            step.rel)
            try:
                verdict = within_budget(check, settings.budget,
                                        lambda why: Verdict(UNDECIDED, why))
            except Exception as error:  # the user's rule raised: their bad input, named
                raise BadInput(f"{step.file}:{step.line}: step {n}: {type(error).__name__}: "
                               f"{error}") from error
            verdicts.setdefault(str(n), {})[model.name] = asdict(verdict)
    return verdicts


def check_sealed(sealed: dict, settings: VerifySettings,
                 progress: Progress | None = None) -> DerivationReport:
    """Rebuild a sealed derivation, validate its declarations, check every step under each
    model and back its claim by Monte Carlo."""
    started = time.perf_counter()
    report = DerivationReport(printable(sealed.get("name", "?")),
                              printable(sealed.get("file", "?")))
    try:
        derivation = rebuilt(sealed)
        report.expected_refuted_at = derivation.expect_refuted_at
        models = _models(derivation, settings)
        for checked in [derivation, *_cited(derivation)]:  # a citation is proved here too
            validate(checked, models)
            for model in models:
                fits_model(checked, model)
        rules = [[r.unfolded(derivation.where) for r in resolve(step.by)]
                 for step in derivation.steps]
    except BadInput as error:
        report.error = str(error)
        return report
    except KeyError as error:  # an unknown model name
        report.error = f"{sealed.get('file')}:{sealed.get('line')}: {error.args[0]}"
        return report
    _describe(report, derivation, models, rules)
    user = sealed.get("user_verdicts", {})
    claim = unfolded_claim(derivation)
    for model in models:
        if progress:
            progress(f"{derivation.name} under {model.name}")
        try:
            establish_lemmas([r for step_rules in rules for r in step_rules], model, settings)
            report.models.append(_check_under(derivation, rules, model, settings, claim, user))
        except InternalError as error:
            report.error = str(error)
            cause = error.__cause__
            report.internal = "".join(traceback.format_exception(cause)) if cause else str(error)
            return report
    if settings.monte_carlo and derivation.distinct:  # said, not left as "not run"
        unsampled = about_generic_indices({x for pair in derivation.distinct for x in pair})
        for model_report in report.models:
            model_report.monte_carlo = [unsampled]
    elif settings.monte_carlo and not settings.sample_later:
        for model, model_report in zip(models, report.models):
            if progress:
                progress(f"Monte Carlo for {show(claim.lhs)} under {model.name}")
            model_report.monte_carlo = sample(claim, model, settings)
    report.seconds = time.perf_counter() - started
    return report


def _models(derivation: Derivation, settings: VerifySettings) -> list[Model]:
    """The models to check under: the settings' override, or the derivation's own."""
    return [get_model(m) for m in settings.models] if settings.models \
        else resolve_models(derivation.models)


def claims_to_sample(sealed: dict, settings: VerifySettings) -> list[tuple[int, object, Model]]:
    """(position of the model, claim, model) for the Monte Carlo of a sealed derivation, as its
    checker would sample them; none when Monte Carlo is off, the claim is about generic indices
    (nothing to sample) or the derivation does not rebuild (its checker says why)."""
    try:
        derivation = rebuilt(sealed)
        models = _models(derivation, settings)
    except (BadInput, KeyError):
        return []
    if not settings.monte_carlo or derivation.distinct:
        return []
    claim = unfolded_claim(derivation)
    return [(position, claim, model) for position, model in enumerate(models)]


def rebuilt(sealed: dict) -> Derivation:
    """The derivation in ``sealed``; data that does not have the sealed shape (which only a
    loader that was tampered with sends) is bad input."""
    try:
        return unseal(sealed)
    except BadInput as error:
        where = f"{sealed.get('file', '?')}:{sealed.get('line', '?')}"
        raise BadInput(str(error) if str(error).startswith(str(sealed.get('file')))
                       else f"{where}: {error}") from error
    except (TypeError, ValueError, KeyError, IndexError, AttributeError,
            RecursionError) as error:  # RecursionError: nested too deep (review round 60)
        raise BadInput(f"{sealed.get('file', '?')}: the sealed derivation is malformed: "
                       f"{type(error).__name__}: {error}") from error


def _describe(report: DerivationReport, derivation: Derivation, models: list[Model],
              rules: list) -> None:
    """What the report says was checked: the claim with its abbreviations and hypotheses, the
    title, and everything the proof rests on beyond the trusted base."""
    report.title = derivation.title
    report.claim = f"{show(derivation.claim.lhs)} {SYMBOLS[derivation.relation]} " \
                   f"{show(derivation.claim.rhs)}"
    report.claim_latex, report.claim_srepr = to_latex(derivation.claim), sp.srepr(
        derivation.claim)
    report.definitions = [f"{show(k)} = {show(v)}" for k, v in derivation.where.items()]
    report.hypotheses = [" ≠ ".join(sorted(map(show, pair))) for pair in derivation.distinct]
    conditions = claim_conditions(derivation, models)
    exprs = claim_expressions(derivation, models)
    for model in models:  # the divisors of moments, in their values under each model
        conditions += [c for c in moment_divisor_conditions(exprs, model) if c not in conditions]
    report.conditions = [show(c) for c in conditions]
    report.conditions_latex = [to_latex(c) for c in conditions]
    report.assumptions = list(dict.fromkeys(
        f"model {x.name} (defined by the user: {x.title})" if isinstance(x, Model)
        else x.assumption
        for x in assumed(models, [r for step_rules in rules for r in step_rules])))


def assumed(models: list[Model], rules: list) -> list:
    """What a proof with these models and rules rests on beyond the trusted base: the models
    the user defined, the rules of the user's code and the lemmas (also those of cited
    derivations)."""
    return [m for m in models if MODELS.get(m.name) is not m] + \
        [r for r in _all_rules(rules) if isinstance(r, UserRule | Lemma)]


def _cited(derivation: Derivation) -> list[Derivation]:
    """The derivations that ``derivation`` cites, and those they cite, each once."""
    found: dict[int, Derivation] = {}
    for rule in _all_rules([r for step in derivation.steps for r in resolve(step.by)]):
        if isinstance(rule, Cite):
            found.setdefault(id(rule.derivation), rule.derivation)
    return list(found.values())


def _all_rules(rules: list) -> Iterator:
    """The rules, and the rules of the derivations they cite, recursively."""
    for rule in rules:
        yield rule
        if isinstance(rule, Cite):
            yield from _all_rules([r for step in rule.derivation.steps for r in resolve(step.by)])


def establish_lemmas(rules: list, model: Model, settings: VerifySettings) -> None:
    """Ask the exact check whether each lemma (also in cited derivations) holds under the model
    in every case of its free indices; the rule check rewrites with it only where it does."""
    for rule, where in _lemmas(rules, {}):
        if model.name in rule.holds:
            continue
        lhs, rhs = (unfold(x, where) for x in (rule.equation.lhs, rule.equation.rhs))
        verdict = within_budget(lambda lhs=lhs, rhs=rhs: exact_check(lhs, rhs, model),
                                settings.budget,
                                lambda why: Verdict(UNDECIDED, why))
        if verdict.passed and verdict.conclusive:
            rule.holds[model.name] = None
        elif verdict.status == FAIL:
            rule.holds[model.name] = (f"lemma {rule.label} does not hold under model "
                                      f"{model.name}: {verdict.reason}")
        else:
            rule.holds[model.name] = (f"lemma {rule.label} could not be established under "
                                      f"{model.name}: {verdict.reason}")


def _lemmas(rules: list, where: dict) -> Iterator[tuple[Lemma, dict]]:
    for rule in rules:
        if isinstance(rule, Lemma):
            yield rule, where
        elif isinstance(rule, Cite):
            cited = rule.derivation
            yield from _lemmas([r for step in cited.steps for r in resolve(step.by)],
                               cited.where)


def unfolded_claim(derivation: Derivation):
    """The derivation's claim with its abbreviations (p_i for a softmax) written out: what the
    Monte Carlo check samples."""
    where = derivation.where
    return CLAIMS[derivation.relation](unfold(derivation.claim.lhs, where),
                                       unfold(derivation.claim.rhs, where), evaluate=False)


def _check_under(derivation: Derivation, rules: list, model: Model, settings: VerifySettings,
                 claim, user_verdicts: dict) -> ModelReport:
    where = derivation.where
    result = ModelReport(model.name)

    def budgeted(check, *args):
        return within_budget(lambda: check(*args), settings.budget,
                             lambda why: Verdict(UNDECIDED, why))

    for n, ((previous, step), step_rules) in enumerate(zip(derivation.chain(), rules), 1):
        before, after = unfold(previous, where), unfold(step.expr, where)
        distinct = derivation.distinct
        try:
            if any(isinstance(r, UserRule) for r in _all_rules(step_rules)):
                rule = _user_verdict(user_verdicts.get(str(n), {}), model, step_rules)
            else:
                rule = budgeted(rule_check, before, after, step_rules, model, distinct,
                                step.rel)
            exact = budgeted(exact_check, before, after, model, distinct, step.rel)
            numeric = budgeted(numeric_check, before, after, model, settings.numeric,
                               distinct, step.rel)
        except Exception as error:
            raise InternalError(f"{step.file}:{step.line}: step {n}: internal error while "
                                f"checking under {model.name}: {type(error).__name__}: "
                                f"{error}") from error
        result.steps.append(StepReport(
            index=n, rule=" + ".join(step.rule_names), expression=show(step.expr),
            why=step.why, location=f"{step.file}:{step.line}", relation=step.rel,
            rule_check=rule, exact_check=exact, numeric_check=numeric))
    result.conclusion = budgeted(_conclusion, derivation, claim)
    return result


def _user_verdict(verdicts: dict, model: Model, rules: list) -> Verdict:
    """The rule check of a step with a user's rule, made beside the user's file (so only as
    trustworthy as that code, which the verdict says it rests on); a model it was not made under
    leaves it undecided."""
    data = verdicts.get(model.name)
    if data is None:
        return Verdict(UNDECIDED, f"the user's rule was not checked under {model.name}")
    verdict = Verdict(status=data["status"] if data.get("status") in (PASS, FAIL, UNDECIDED)
                      else UNDECIDED, reason=str(data.get("reason", "")))
    users = [r.assumption for r in _all_rules(rules) if isinstance(r, UserRule)]
    verdict.assumes = tuple(dict.fromkeys(users + [str(a) for a in data.get("assumes", ())]))
    return verdict


def sample(claim, model: Model, settings: VerifySettings) -> list[MonteCarloResult]:
    """Monte Carlo for one claim under one model, under the check budget."""
    return sample_claims([(claim, model)], settings)[0]


def sample_claims(claims: list[tuple], settings: VerifySettings) -> list[list[MonteCarloResult]]:
    """Monte Carlo for (claim, model) pairs from one stream of draws, under a check budget per
    claim; when that fails as a whole, claim by claim, so that the failure is the claim's."""
    def undecided(why: str) -> list[MonteCarloResult]:
        return [MonteCarloResult(0, 0, *[float("nan")] * 4, UNDECIDED,
                                 f"Monte Carlo could not run: {why}")]

    seconds = settings.budget and settings.budget * len(claims)
    try:
        return within_budget(lambda: check_claims(claims, settings.monte_carlo_dimensions),
                             seconds, lambda why: [undecided(why)] * len(claims))
    except Exception as error:  # noqa: BLE001 - a claim the sampler cannot handle is n/a
        if len(claims) > 1:
            return [sample_claims([pair], settings)[0] for pair in claims]
        return [undecided(f"{type(error).__name__}: {error}")]


def _conclusion(derivation: Derivation, claim) -> Verdict:
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
    last = unfold(sp.sympify(derivation.steps[-1].expr), derivation.where)
    equal = algebraically_equal(last, claim.rhs, distinct=derivation.distinct)
    if equal:  # no model says what the moments in a denominator are: each may be anything
        why = unshared_pole_for_any_values(last, claim.rhs)
        return Verdict(UNDECIDED, f"the chain ends at {show(derivation.steps[-1].expr)}, equal "
                                  f"to the claim's right-hand side only where both have a value"
                                  f" ({why})") if why else Verdict(PASS)
    status = UNDECIDED if equal is None else FAIL
    why = unshared_pole(last, claim.rhs)
    return Verdict(status, f"the chain ends at {show(derivation.steps[-1].expr)}, but the claim's "
                           f"right-hand side is {show(derivation.claim.rhs)}"
                           + (f" ({why})" if why else ""))
