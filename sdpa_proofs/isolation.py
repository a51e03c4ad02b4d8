"""Worker processes: every derivation file runs in a process of its own, and is checked in
another that never ran it.

For each file the parent forks a *loader* that runs the file (with its own folder first on the
module path and no module of another user file in its cache), seals each derivation into JSON and,
where a step names a rule of the user's own code, makes that rule check beside the code.  Then
the parent forks a *checker* from itself, which has never run user code, and sends it the
sealed derivations.  So nothing a file does (patching the checker, exiting, crashing, looping)
reaches another file's verdict, its own checks or the parent.

The parent keeps every budget: a worker that outlives its deadline is killed, whatever it does
with signals or exceptions.  Forked workers start in milliseconds, as the parent has imported
the toolkit already.
"""

from __future__ import annotations

import faulthandler
import gc
import json
import multiprocessing
import os
import pickle
import resource
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import wait
from pathlib import Path

# Modules the checks import at their first use (NumPy's random generator and polynomials,
# SymPy's units, which simplify imports, lambdify's code generation, delta sums): imported
# here, once, before the workers fork, instead of in every worker that needs them
import numpy.polynomial  # noqa: F401
import numpy.random  # noqa: F401
import sympy.codegen.ast  # noqa: F401
import sympy.concrete.delta  # noqa: F401
import sympy.physics.units  # noqa: F401

from .allocator import keep_freed_memory
from .budget import time_budget
from .distributions import GAUSS_RULES
from .errors import BadInput, BudgetExceeded
from .loader import LoadError, discover, run_file
from .report import SAMPLED, DerivationReport, RunReport
from .runner import (
    VerifySettings,
    check_sealed,
    claims_to_sample,
    sample_claims,
    user_rule_verdicts,
)
from .sealing import drawn_families, seal, seal_model, unseal, user_code_steps
from .text import printable
from .verdicts import UNDECIDED, MonteCarloResult

LOAD_BUDGET = 60.0  # seconds to run one derivation file
SLACK = 30.0  # seconds a checker may take beyond the sum of its checks' budgets
GRACE = 5.0  # seconds a loader may take beyond its loading budget before it is killed
MAX_EXTENSION = 3600.0  # the most time a loader can ask for
_FORK = multiprocessing.get_context("fork")
_LIBRARY_ROOTS = tuple({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix,
                                                      os.path.dirname(os.path.dirname(
                                                          os.path.abspath(__file__))))})


@dataclass
class _Task:
    """One worker: ``target(*args, extend)`` returns the bytes it sends back, and may call
    ``extend(seconds)`` to ask for more time for work it has found to do; ``done`` gets the
    bytes (or None and the reason the worker failed) and may return follow-up tasks."""

    label: str
    target: Callable[..., bytes]
    args: tuple
    seconds: float | None
    done: Callable[[bytes | None, str], list]
    memory: float | None = None  # GiB


def _child(connection, target: Callable[..., bytes], args: tuple,
           memory: float | None) -> None:
    faulthandler.disable()  # a worker that crashes is reported by the parent, not by a dump
    if memory:  # past the cap an allocation fails with MemoryError: undecided, not a swap storm
        cap = int(memory * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    def extend(seconds: float) -> None:
        """Ask for ``seconds`` from now (instead of what was left)."""
        connection.send_bytes(b"+" + repr(float(seconds)).encode())

    try:
        payload = target(*args, extend)
    except BaseException:  # noqa: BLE001 - whatever happens, the parent gets a reason
        payload = b"!" + traceback.format_exc().encode("utf-8", "replace")
    try:
        connection.send_bytes(payload)
    finally:
        connection.close()
        os._exit(0)  # no atexit handlers of the parent (pytest's, say) in the child


def run_tasks(tasks: list[_Task], jobs: int | None = None) -> None:
    """Run tasks in forked workers, at most ``jobs`` at once, killing each that outlives its
    time; follow-up tasks join the queue."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    queue, running = list(tasks), {}
    while queue or running:
        while queue and len(running) < jobs:
            task = queue.pop(0)
            receiver, sender = _FORK.Pipe(duplex=False)
            process = _FORK.Process(target=_child, daemon=True,
                                    args=(sender, task.target, task.args, task.memory))
            gc.freeze()  # the parent's objects stay out of the child's collections, which
            try:         # would copy every page they touch
                process.start()
            finally:
                gc.unfreeze()  # and in the parent's: frozen objects are never freed
            sender.close()
            deadline = None if task.seconds is None else time.monotonic() + task.seconds
            running[receiver] = (task, process, deadline)
        deadlines = [d for _, _, d in running.values() if d is not None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        for receiver in wait(list(running), timeout):
            task, process, deadline = running.pop(receiver)
            try:
                payload = receiver.recv_bytes()
            except (EOFError, OSError):
                payload = None
            if payload is not None and payload.startswith(b"+"):
                if deadline is not None:  # from now on, at most MAX_EXTENSION
                    deadline = time.monotonic() + min(float(payload[1:]), MAX_EXTENSION)
                running[receiver] = (task, process, deadline)
                continue
            queue.extend(_finish(task, process, receiver, payload))
        now = time.monotonic()
        for receiver, (task, process, deadline) in list(running.items()):
            if deadline is not None and now >= deadline:
                del running[receiver]
                process.kill()
                process.join()
                receiver.close()
                queue.extend(task.done(None, f"did not finish within {task.seconds:g} s"))


def _finish(task: _Task, process, receiver, payload: bytes | None) -> list:
    receiver.close()
    process.join()
    if payload is None:
        code = process.exitcode
        how = f"was killed by signal {-code}" if code and code < 0 else f"exited ({code})"
        return task.done(None, f"the worker {how} before it answered")
    if payload.startswith(b"!"):
        return task.done(None, "internal error:\n" + payload[1:].decode("utf-8", "replace"))
    return task.done(payload, "")


# ---- loading -----------------------------------------------------------------------------

def _forget_user_modules() -> None:
    """Drop every cached module that is not the library's, so that helper modules resolve
    beside this file and not from wherever another file found them."""
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if origin and not _in_library(origin):
            del sys.modules[name]


_IN_LIBRARY: dict[str, bool] = {}  # a module's file -> whether it lies under _LIBRARY_ROOTS


def _in_library(origin: str) -> bool:
    """Whether a module's file lies under the library's roots, remembered: resolving the links
    of some 900 paths took every loader 80 ms, when the parent, which has imported them all
    and runs no user code, can resolve them once before it forks (``_remember_modules``)."""
    if origin not in _IN_LIBRARY:
        _IN_LIBRARY[origin] = os.path.realpath(origin).startswith(_LIBRARY_ROOTS)
    return _IN_LIBRARY[origin]


def _remember_modules() -> None:
    """Resolve, in the parent, where each module it has imported lies (see _in_library)."""
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if origin:
            _in_library(origin)


def _load(path: str, settings: VerifySettings, extend: Callable[[float], None]) -> bytes:
    """In the loader: run the file, seal its derivations, make its user rules' checks (for
    which it asks the parent for their budgets' worth of time)."""
    if not settings.debug:  # a file's prints would mix with the report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    _forget_user_modules()
    loaded = _run_budgeted(Path(path), settings.debug)
    if isinstance(loaded, LoadError):
        return json.dumps({"error": vars(loaded)}).encode()
    sealed = []
    try:
        for derivation in loaded:
            item = seal(derivation)
            checks = len(user_code_steps(item)) * len(settings.models or item["models"])
            if checks and settings.budget:
                extend(GRACE + 2 * settings.budget * checks)  # each with its lemmas
            item["user_verdicts"] = user_rule_verdicts(derivation, item, settings)
            sealed.append(item)
    except BadInput as error:
        message = str(error)
        if settings.debug and error.__cause__ is not None:
            message += "\n" + "".join(traceback.format_exception(error.__cause__))
        return json.dumps({"error": {"file": path, "message": message}}).encode()
    return json.dumps({"derivations": sealed}).encode()


def _run_budgeted(path: Path, debug: bool) -> list | LoadError:
    try:
        with time_budget(LOAD_BUDGET):
            return run_file(path, debug)
    except BudgetExceeded:
        return LoadError(str(path), f"loading did not finish within {LOAD_BUDGET:g} s")


def _load_task(path: Path, settings: VerifySettings,
               then: Callable[[list | LoadError], list]) -> _Task:
    """A loader, with the file's loading budget and a little grace as its deadline."""
    seconds = LOAD_BUDGET + GRACE
    _remember_modules()

    def done(payload: bytes | None, reason: str) -> list:
        return then(_read_loaded(path, payload, reason))

    return _Task(f"loading {path}", _load, (str(path), settings), seconds, done, settings.memory)


def _read_loaded(path: Path, payload: bytes | None, reason: str) -> list | LoadError:
    """The sealed derivations a loader sent, or the file's error.  The payload is JSON from a
    process that ran user code: read as data, checked for shape, never unpickled."""
    if payload is None:
        if reason.startswith("did not finish"):
            return LoadError(str(path), f"the file's code (loading it, or checking its own "
                                        f"rules) {reason}")
        return LoadError(str(path), f"while loading, {reason}")
    try:
        data = json.loads(payload)
        if "error" in data:
            error = data["error"]
            return LoadError(str(error["file"]), str(error["message"]),
                             bool(error.get("empty", False)))
        derivations = data["derivations"]
        if not isinstance(derivations, list) or not all(map(_shaped, derivations)):
            raise TypeError("not a list of derivations")
        return derivations
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        # RecursionError: JSON nested deeper than the parser goes (review round 60)
        return LoadError(str(path), f"the loader sent something unreadable: "
                                    f"{type(error).__name__}: {error}")


def _shaped(item) -> bool:
    """Whether a sealed derivation has the shape the parent reads before any checker does:
    a dict whose models are names or dicts, and whose steps and distinct indices are lists."""
    if not isinstance(item, dict):
        return False
    models, steps, distinct = (item.get(key) or [] for key in ("models", "steps", "distinct"))
    return all(isinstance(x, list) for x in (models, steps, distinct)) \
        and all(isinstance(spec, (str, dict)) for spec in models) \
        and all(isinstance(step, dict) for step in steps)


# ---- checking ----------------------------------------------------------------------------

def _check(sealed: list[dict], settings: VerifySettings, extend: Callable) -> bytes:
    """In a checker (a fork of the parent, which never ran user code): the reports, and the
    Gauss rules it had to compute, for the parent to hand to later checkers."""
    known = set(GAUSS_RULES)
    reports = [check_sealed(item, settings) for item in sealed]
    learned = {key: rule for key, rule in GAUSS_RULES.items() if key not in known}
    return pickle.dumps((reports, learned))


def check_seconds(sealed: list[dict], settings: VerifySettings) -> float | None:
    """A checker's deadline: every check's budget (three per step and model, a lemma's, Monte
    Carlo's) and some slack."""
    if not settings.budget:
        return None
    checks = 0
    for item in sealed:
        models = len(settings.models or item.get("models") or [1])
        checks += models * (3 * len(item.get("steps", [])) + 4)
    return SLACK + settings.budget * checks


def _check_task(path: Path, sealed: list[dict], settings: VerifySettings,
                then: Callable[[list[DerivationReport]], None]) -> _Task:
    def done(payload: bytes | None, reason: str) -> list:
        if payload is None:
            then([_unfinished(item, path, reason) for item in sealed])
        else:
            reports, learned = pickle.loads(payload)  # noqa: S301 - a fork that ran no user code
            GAUSS_RULES.update(learned)
            then(reports)
        return []

    return _Task(f"checking {path}", _check, (sealed, settings), check_seconds(sealed, settings),
                 done, settings.memory)


def _unfinished(item: dict, path: Path, reason: str) -> DerivationReport:
    """A derivation whose checker was killed at its deadline (undecided) or died (ours)."""
    expected = item.get("expect_refuted_at")
    report = DerivationReport(printable(item.get("name")), printable(path),
                              expected_refuted_at=expected if type(expected) is int else None)
    if reason.startswith("did not finish"):
        report.timed_out = f"checking {reason}"
    else:
        report.error = f"{path}: internal error: the checking worker {reason.splitlines()[0]}"
        report.internal = reason
    return report


# ---- the two things callers want -----------------------------------------------------------

FileProgress = Callable[[str, list], None]


def verify_paths(paths: list[str], settings: VerifySettings | None = None,
                 progress: FileProgress | None = None,
                 checked: list | None = None) -> RunReport:
    """Load and check every derivation file under ``paths``, each in its own workers; files
    that do not load become error entries, and the others are still checked.  ``progress``
    hears of each file as it finishes, with its reports; ``checked``, when given, receives
    (sealed derivation, its report) for every derivation checked: what a renderer shows must
    be what was checked, not the file loaded again.

    All files are loaded first; then one sampler backs every claim by Monte Carlo (drawing
    once for all of them) while the checkers check the steps."""
    settings = settings or VerifySettings()
    run = RunReport(allow_undecided=settings.allow_undecided, strict=settings.strict)
    files, errors = discover(paths)
    run.derivations.extend(_error_report(e) for e in errors)
    checking = replace(settings, sample_later=True)
    loaded: dict[Path, list | LoadError] = {}

    def keep(path: Path):
        return lambda outcome: loaded.__setitem__(path, outcome) or []

    run_tasks([_load_task(path, checking, keep(path)) for path in files], settings.jobs)
    results: dict[Path, list[DerivationReport]] = {}

    def finished(path: Path, reports: list[DerivationReport]) -> None:
        results[path] = reports
        if progress:
            progress(printable(path), reports)

    sealed = {path: outcome for path, outcome in loaded.items()
              if not isinstance(outcome, LoadError)}
    samples: dict = {}
    tasks = _sampler_tasks(sealed, settings, samples) if settings.monte_carlo else []
    for path in files:
        outcome = loaded.get(path, LoadError(str(path), "the loader sent nothing"))
        if isinstance(outcome, LoadError):
            finished(path, [_error_report(outcome)])
        else:
            tasks.append(_check_task(path, outcome, checking,
                                     lambda r, path=path: finished(path, r)))
    run_tasks(tasks, settings.jobs)
    for path in files:
        run.derivations.extend(results.get(path, []))
        if checked is not None and path in sealed:
            checked.extend(zip(sealed[path], results.get(path, []), strict=True))
    _merge_samples(results, samples, progress)
    if not files and not errors:
        run.derivations.append(DerivationReport(
            name=", ".join(paths), file=", ".join(paths),
            error=f"no derivation files under {', '.join(paths)} (a derivation file is a .py "
                  "file that calls Derivation(...))"))
    return run


def _sampler_tasks(sealed: dict[Path, list[dict]], settings: VerifySettings,
                   samples: dict) -> list[_Task]:
    """Samplers for the claims of every loaded derivation, one per worker at most (each a fork
    of the parent, like the checkers).  Models whose latents come from the same families share
    their standardised draws, so they go to the same sampler; the families are shared out so
    that the samplers' work is about even.  Results land in ``samples``: (file, derivation,
    model position) -> results; a sampler that fails leaves its claims undecided."""
    groups: dict[str, list] = {}
    for path, found in sealed.items():
        for n, item in enumerate(found):
            if item.get("distinct"):  # generic indices: nothing to sample
                continue
            for position, spec in enumerate(settings.models or item.get("models") or []):
                groups.setdefault(_draw_families(spec), []).append((str(path), n, position))
    jobs = max(1, settings.jobs or os.cpu_count() or 1)
    shares: list[list] = [[] for _ in range(min(jobs, len(groups)))]
    for keys in sorted(groups.values(), key=len, reverse=True):  # largest first, to the least
        min(shares, key=len).extend(keys)                         # loaded sampler
    items = [(str(path), n, item) for path, found in sealed.items()
             for n, item in enumerate(found)]
    return [_sampler_task(items, set(keys), settings, samples) for keys in shares]


def _draw_families(spec) -> str:
    """What a model draws its latents from (the families), or the model itself when that
    cannot be told (its own checker reports a model that does not load)."""
    families = drawn_families(spec)
    if families:
        return ", ".join(families)
    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True)


def _sampler_task(items: list[tuple], keys: set, settings: VerifySettings,
                  samples: dict) -> _Task:
    def done(payload: bytes | None, reason: str) -> list:
        if payload is None:
            failed = [MonteCarloResult(0, 0, *[float("nan")] * 4, UNDECIDED,
                                       f"Monte Carlo {reason}")]
            samples.update(dict.fromkeys(keys, failed))
        else:
            samples.update(pickle.loads(payload))  # noqa: S301 - a fork that ran no user code
        return []

    seconds = SLACK + settings.budget * len(keys) if settings.budget else None
    return _Task("sampling", _sample_sealed, (items, keys, settings), seconds, done,
                 settings.memory)


def _sample_sealed(items: list[tuple], keys: set, settings: VerifySettings,
                   extend: Callable) -> bytes:
    """In a sampler: Monte Carlo for the claims it was given (file, derivation, model
    position), equal models taken as one so that their samples are drawn once."""
    keep_freed_memory()  # its arrays are allocated and freed thousands of times
    found, pairs, same = [], [], {}
    mine = {(path, n) for path, n, _ in keys}  # no other sampler's file is rebuilt here
    for path, n, item in items:
        if (path, n) not in mine:
            continue
        for position, claim, model in claims_to_sample(item, settings):
            if (path, n, position) in keys:
                model = same.setdefault(json.dumps(seal_model(model), sort_keys=True), model)
                found.append((path, n, position))
                pairs.append((claim, model))
    return pickle.dumps(dict(zip(found, sample_claims(pairs, settings))))


def _merge_samples(results: dict[Path, list[DerivationReport]], samples: dict,
                   progress: FileProgress | None) -> None:
    """Each checked model's Monte Carlo results into its report (a derivation that did not
    check, an error say, has no model to receive them); a line per model for ``progress``."""
    touched: dict[str, dict[int, DerivationReport]] = {}
    for path, reports in results.items():
        for n, report in enumerate(reports):
            for position, model_report in enumerate(report.models):
                result = samples.get((str(path), n, position))
                if result is not None:
                    model_report.monte_carlo = result
                    touched.setdefault(model_report.model, {})[id(report)] = report
    if progress:
        for model, reports in touched.items():
            sampled = [replace(r, models=[m for m in r.models if m.model == model])
                       for r in reports.values()]  # what this model's sampler found
            progress(SAMPLED.format(model=printable(model)), sampled)


def _error_report(error: LoadError) -> DerivationReport:
    file = printable(error.file)
    return DerivationReport(name=file, file=file, error=f"{file}: {printable(error.message)}")


def load_paths(paths: list[str], settings: VerifySettings | None = None) -> list:
    """The derivations under ``paths``, each file run in its own worker and its derivations
    rebuilt here from their sealed form (no user code runs in this process), and a LoadError
    for each file or path that does not load."""
    settings = settings or VerifySettings()
    files, errors = discover(paths)
    items: list = list(errors)
    found: dict[Path, list] = {}

    def keep(path: Path):
        def then(outcome: list | LoadError) -> list:
            found[path] = [outcome] if isinstance(outcome, LoadError) else outcome
            return []
        return then

    run_tasks([_load_task(path, settings, keep(path)) for path in files], settings.jobs)
    for path in files:
        for item in found.get(path, []):
            if isinstance(item, LoadError):
                items.append(item)
                continue
            try:
                items.append(unseal(item))
            except BadInput as error:
                items.append(LoadError(str(path), str(error)))
    return items


def load_file(path: Path) -> list | LoadError:
    """The derivations of one file, loaded in a worker and rebuilt here."""
    items = load_paths([str(path)])
    errors = [item for item in items if isinstance(item, LoadError)]
    return errors[0] if errors else items


def load_sealed(path: Path, settings: VerifySettings) -> list[dict] | LoadError:
    """The sealed derivations of one file (for a caller that checks them later)."""
    box: list = []
    run_tasks([_load_task(path, settings, lambda outcome: box.append(outcome) or [])], 1)
    return box[0]


def check_in_worker(path: Path, sealed: list[dict],
                    settings: VerifySettings) -> list[DerivationReport]:
    """Check sealed derivations in a fresh checker under the parent's deadline."""
    box: list = []
    run_tasks([_check_task(path, sealed, settings, box.append)], 1)
    return box[0]
