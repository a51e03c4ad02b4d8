"""The command line: ``sdpa-proofs list | verify | latex``.

Exit codes: 0 all verified, 1 a step failed (or stayed undecided), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from . import __version__
from .budget import DEFAULT_BUDGET
from .options import allowance, digits, model_name

# The engine (SymPy, mpmath, NumPy) is imported by the command that needs it, not here, so
# that --help and argument errors answer at once.

DEFAULT_PATH = "derivations"
PATHS_HELP = f"derivation files or folders (default: ./{DEFAULT_PATH}, else the bundled catalogue)"


@contextmanager
def progress_line(errors: Console) -> Iterator[Callable[[str], None]]:
    """A transient spinner with elapsed time on stderr (only on a terminal); yields the function
    that says what is being done."""
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=errors, transient=True, disable=not errors.is_terminal) as progress:
        task = progress.add_task("starting")
        yield lambda what: progress.update(task, description=what)


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError("at least one worker")
    return jobs


def _model_or_file(value: str) -> str:
    """A bundled model's name, or FILE.py:VARIABLE naming a model of one's own (loaded when the
    command runs)."""
    if ".py:" in value:
        path = Path(value.rsplit(":", 1)[0])
        if not path.is_file():
            raise argparse.ArgumentTypeError(f"{value!r}: no such file {str(path)!r}")
        return value
    return model_name(value)


def _user_model(spec: str):
    """The model in FILE.py:VARIABLE: the file runs (it is the user's own code, for the user's
    own question), and the variable must hold a Model."""
    import runpy

    from .errors import BadInput
    from .models import Model

    file, variable = spec.rsplit(":", 1)
    try:
        found = runpy.run_path(file).get(variable)
    except Exception as error:  # noqa: BLE001 - a user's file may raise anything
        raise BadInput(f"{file}: {type(error).__name__}: {error}") from error
    if not isinstance(found, Model):
        raise BadInput(f"{file}: {variable} is {'missing' if found is None else 'not a model'}; "
                       f"give FILE.py:VARIABLE with a model such as from_covariance(...)")
    return found


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="sdpa-proofs", description="Machine-checked derivations "
                                  "of why attention divides by sqrt(d_k).")
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = top.add_subparsers(dest="command", required=True)

    listing = commands.add_parser("list", help="list derivations (or models, or rules)")
    listing.add_argument("paths", nargs="*", metavar="PATH",
                         help=PATHS_HELP)
    listing.add_argument("--models", action="store_true", help="list the available models")
    listing.add_argument("--rules", action="store_true",
                         help="list the rules a step may name, with the fact each one uses")

    verify = commands.add_parser("verify", help="check every step of every derivation")
    verify.add_argument("paths", nargs="*", metavar="PATH",
                        help=PATHS_HELP)
    verify.add_argument("--json", metavar="FILE", type=Path, help="write a JSON report")
    verify.add_argument("--digits", type=digits, default=30,
                        help="significant digits the numerical check requires (default 30)")
    verify.add_argument("--model", dest="models", action="append", type=model_name, metavar="NAME",
                        help="check under this model instead of the derivation's own (repeatable)")
    verify.add_argument("--no-monte-carlo", action="store_true", help="skip the Monte Carlo check")
    verify.add_argument("--junit", metavar="FILE", type=Path, help="write a JUnit XML report")
    verify.add_argument("--budget", type=allowance, default=DEFAULT_BUDGET, metavar="SECONDS",
                        help=f"time budget of each check (default {DEFAULT_BUDGET:g}; 0: none); "
                             "a check that runs out is undecided")
    verify.add_argument("--allow-undecided", action="store_true",
                        help="exit 0 even if some checks stay undecided")
    verify.add_argument("--strict", action="store_true",
                        help="fail derivations that are verified only assuming user rules or "
                             "lemmas")
    verify.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                        help="worker processes (default: one per core)")
    verify.add_argument("--memory", type=allowance, default=8.0, metavar="GIB",
                        help="memory cap of each worker in GiB (default 8; 0: none); a check "
                             "that runs out is undecided")
    verify.add_argument("--debug", action="store_true",
                        help="show tracebacks, and what derivation files print while loading")

    growth = commands.add_parser("growth", help="log-log slopes of Var(S) and E[S^2] in d, "
                                 "exact and by Monte Carlo, per model")
    growth.add_argument("--model", dest="models", action="append", type=model_name, metavar="NAME",
                        help="only this model (repeatable; default: all)")
    growth.add_argument("--json", metavar="FILE", type=Path, help="write the rows as JSON")

    scaling = commands.add_parser("scaling", help="softmax(S/c) for c = 1, sqrt(d), d as d grows")
    scaling.add_argument("--model", dest="models", action="append", type=model_name, metavar="NAME",
                         help="model (repeatable; default: independent-normal, correlated-normal,"
                              " shared-factor)")
    scaling.add_argument("--d", dest="dims", type=int, nargs="+", metavar="D",
                         default=[16, 64, 256, 1024, 4096], help="dimensions d")
    scaling.add_argument("--n", dest="ns", type=int, nargs="+", metavar="N", default=[256],
                         help="numbers of keys n (softmax length)")
    scaling.add_argument("--samples", type=int, default=64,
                         help="softmax vectors per (d, n) (default 64)")
    scaling.add_argument("--plot", metavar="DIR", type=Path,
                         help="write figures (PNG and SVG) to DIR; needs the plot extra")
    scaling.add_argument("--json", metavar="FILE", type=Path, help="write the rows as JSON")

    ask = commands.add_parser("moment", help="the exact closed form of a moment under a model, "
                              "for symbolic d (and its value at a d, and Monte Carlo)")
    ask.add_argument("question", metavar="EXPR",
                     help='e.g. "Var(S)", "E[S**2]", "E[(S - Stilde)**2]/2"')
    ask.add_argument("--model", type=_model_or_file, default="independent-normal",
                     metavar="NAME|FILE.py:VARIABLE",
                     help="a bundled model, or a model of your own: the variable of that name "
                          "in a Python file (default independent-normal)")
    ask.add_argument("--d", type=int, metavar="D", help="also the value at this dimension, at "
                     "the model's first parameter point")
    ask.add_argument("--digits", type=digits, default=30, metavar="N",
                     help="significant digits of that value (default 30)")
    ask.add_argument("--monte-carlo", action="store_true",
                     help="also a Monte Carlo estimate at --d, with its 95%% interval")
    ask.add_argument("--latex", action="store_true", help="print the answer as LaTeX")
    ask.add_argument("--json", metavar="FILE", type=Path, help="write the answer as JSON")

    mutate = commands.add_parser("mutate", help="mutation-test the checker on derivations: "
                                 "every mutant that changes the mathematics must be rejected")
    mutate.add_argument("paths", nargs="*", metavar="PATH",
                        help=PATHS_HELP)
    mutate.add_argument("--model", dest="models", action="append", type=model_name, metavar="NAME",
                        help="check the mutants under this model instead of each derivation's "
                             "first (repeatable)")
    mutate.add_argument("--budget", type=allowance, default=DEFAULT_BUDGET, metavar="SECONDS",
                        help=f"time budget of each check (default {DEFAULT_BUDGET:g}; 0: none)")

    report = commands.add_parser("report", help="check the derivations and write them as one "
                                 "document, in English or Chinese (LaTeX; with --pdf, the PDF)")
    report.add_argument("paths", nargs="*", metavar="PATH",
                        help=PATHS_HELP)
    report.add_argument("-o", "--output", type=Path, required=True, metavar="DIR",
                        help="folder for report-LANG.tex (and .pdf), made if missing")
    report.add_argument("--lang", dest="languages", action="append", choices=("en", "zh"),
                        help="en (pdflatex) or zh (xelatex with ctex); repeatable (default en)")
    report.add_argument("--pdf", action="store_true", help="also compile each edition to PDF")
    report.add_argument("--figures", type=Path, metavar="DIR",
                        help="PNG figures to include (default: docs/figures, if there is one)")
    report.add_argument("--no-monte-carlo", action="store_true",
                        help="skip the Monte Carlo check")

    empirical = commands.add_parser(
        "empirical", help="measure q and k of a trained transformer (all-MiniLM-L6-v2) on real "
        "text and compare every head with the models' predictions; needs the empirical extra")
    empirical.add_argument("--text", type=Path, metavar="FILE",
                           help="UTF-8 text, one sequence per line; blank lines and lines "
                                "starting with # are skipped (default: the bundled corpus)")
    empirical.add_argument("--max-tokens", type=int, default=128, metavar="N",
                           help="cut each sequence at N tokens (default 128)")
    empirical.add_argument("--json", metavar="FILE", type=Path,
                           help="write every head's measurements and predictions as JSON")
    empirical.add_argument("--figure", metavar="FILE", type=Path,
                           help="write measured against predicted per head (.png, .svg or "
                                ".pdf; needs the plot extra)")

    latex = commands.add_parser("latex", help="write one standalone .tex per derivation")
    latex.add_argument("paths", nargs="*", metavar="PATH",
                       help=PATHS_HELP)
    latex.add_argument("-o", "--output", type=Path, required=True, metavar="DIR",
                       help="folder for the .tex files (made if missing)")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # a pipe or CI log gets a table 132 columns wide instead of rich's default 80
    console = Console(width=None if sys.stdout.isatty() else 132)
    errors = Console(stderr=True, soft_wrap=True)
    paths = args.paths or [default_path()] if hasattr(args, "paths") else []
    if args.command == "list":
        if args.rules:
            return _list_rules(console)
        return _list(paths, args.models, console, errors)
    if args.command == "verify":
        return _verify(args, paths, console, errors)
    if args.command == "mutate":
        return _mutate(paths, args, console, errors)
    if args.command == "scaling":
        return _scaling(args, console, errors)
    if args.command == "moment":
        return _moment(args, console, errors)
    if args.command == "report":
        return _report(args, paths, console, errors)
    if args.command == "empirical":
        return _empirical(args, console, errors)
    if args.command == "growth":
        from .models import MODELS

        return _growth(args.models or list(MODELS), args.json, console, errors)
    return _latex(paths, args.output, console, errors)


def default_path() -> str:
    """./derivations when there is one, else the catalogue installed with the package."""
    if Path(DEFAULT_PATH).exists():
        return DEFAULT_PATH
    from importlib.resources import files

    return str(files("sdpa_proofs.catalogue"))


def _list(paths: list[str], models: bool, console: Console, errors: Console) -> int:
    if models:
        from .models import MODELS

        for name, model in MODELS.items():
            console.print(Text(name, style="bold") + Text(f"  {model.title}"))
        return 0
    derivations, status = _load(paths, errors)
    for item in derivations:
        console.print(Text(item.name, style="bold") +
                      Text(f"  {item.title}  ({len(item.steps)} step"
                           f"{'' if len(item.steps) == 1 else 's'}, {item.file})"))
    return status


def _list_rules(console: Console) -> int:
    """Every built-in rule by name, with the fact it applies, taken from the rule itself."""
    from .registry import RULES

    for name, rule in RULES.items():
        fact = getattr(rule, "fact", "") or (type(rule).__doc__ or "").strip().split("\n")[0]
        console.print(Text(name, style="bold") + Text(f"  {fact}"), soft_wrap=True)
    return 0


def _load(paths: list[str], errors: Console) -> tuple[list, int]:
    """The derivations under ``paths``; every file that does not load is reported, and makes
    the status 2 (bad input)."""
    derivations, status = [], 0
    from .isolation import load_paths
    from .loader import LoadError

    for item in load_paths(paths):
        if isinstance(item, LoadError):
            errors.print(Text(f"error: {item.file}: {item.message}"), style="red")
            status = 2
        else:
            derivations.append(item)
    return derivations, status


def _verify(args, paths: list[str], console: Console, errors: Console) -> int:
    from .isolation import verify_paths
    from .numeric import NumericSettings
    from .report import write_json
    from .runner import VerifySettings

    settings = VerifySettings(numeric=NumericSettings(digits=args.digits), models=args.models,
                              monte_carlo=not args.no_monte_carlo, budget=args.budget,
                              allow_undecided=args.allow_undecided, strict=args.strict,
                              debug=args.debug, jobs=args.jobs, memory=args.memory)
    from .terminal import file_line, render

    with progress_line(errors) as say:
        def finished(path: str, reports: list) -> None:
            if errors.is_terminal:
                say(f"checked {path}")
            else:  # CI logs: one line per file as it finishes
                errors.print(file_line(path, reports), soft_wrap=True)

        run = verify_paths(paths, settings, finished)
    from .junit import write_junit

    written = []  # the reports first: a display that fails must not cost CI its reports
    for path, write, kind in ((args.json, write_json, "JSON"), (args.junit, write_junit,
                                                                 "JUnit")):
        if path and not _written(errors, path, write, run, path):
            return 2
        if path:
            written.append(Text(f"{kind} report written to {path}"))
    render(run, console, debug=args.debug)
    for line in written:
        console.print(line)
    return run.exit_code


def output_problem(path: Path, flag: str) -> str | None:
    """Why an output file cannot be written at ``path`` (a folder, or in no folder), or None."""
    if path.is_dir():
        return f"{flag} {path} is a folder"
    if not path.parent.is_dir():
        return f"{flag} {path}: there is no folder {path.parent}"
    return None


def _written(errors: Console, path: Path, write: Callable, *args) -> bool:
    """``write(*args)``, a report or file at ``path``; a path that cannot be written is bad
    input, said plainly."""
    try:
        write(*args)
    except OSError as error:
        errors.print(Text(f"error: cannot write {path}: {error.strerror or error}"),
                     style="red")
        return False
    return True


def _growth(models: list[str], output: Path | None, console: Console, errors: Console) -> int:
    from .growth import growth
    from .models import MODELS
    from .report import finite_row, write_atomically
    from .terminal import growth_table

    rows = []
    with progress_line(errors) as say:
        for name in models:
            say(f"sampling {name}")
            rows.extend(growth(MODELS[name]))
    console.print(growth_table(rows))
    if output:
        text = json.dumps([finite_row(asdict(r)) for r in rows], indent=2, allow_nan=False)
        if not _written(errors, output, write_atomically, output, text + "\n"):
            return 2
    return 1 if any(r.status == "fail" for r in rows) else 0


def _moment(args, console: Console, errors: Console) -> int:
    from .errors import BadInput
    from .questions import moment
    from .report import write_atomically

    if args.d is not None and args.d < 1:
        errors.print("error: --d takes a positive integer", style="red")
        return 2
    if args.monte_carlo and args.d is None:
        errors.print("error: --monte-carlo needs --d (the dimension to sample at)", style="red")
        return 2
    try:
        model = _user_model(args.model) if ".py:" in args.model else args.model
        answer = moment(args.question, model, d=args.d, digits=args.digits,
                        monte_carlo=args.monte_carlo)
    except BadInput as error:
        errors.print(Text(f"error: {error}"), style="red")
        return 2
    console.print(Text(answer.latex() if args.latex else str(answer)), soft_wrap=True)
    if args.json:
        text = json.dumps(answer.as_json(), indent=2, allow_nan=False) + "\n"
        if not _written(errors, args.json, write_atomically, args.json, text):
            return 2
    monte_carlo = answer.monte_carlo
    return 1 if monte_carlo is not None and monte_carlo.status == "fail" else 0


def _empirical(args, console: Console, errors: Console) -> int:
    from .empirical import run_empirical
    from .errors import BadInput
    from .report import write_atomically
    from .terminal import empirical_tables

    if args.max_tokens < 2:
        errors.print("error: --max-tokens takes an integer >= 2 (a row needs two keys)",
                     style="red")
        return 2
    problems = []
    if args.json:
        problems.append(output_problem(args.json, "--json"))
    if args.figure:
        from .plots import figure_problem

        problems += [output_problem(args.figure, "--figure"), figure_problem(args.figure)]
        if args.json and args.json.resolve() == args.figure.resolve():
            problems.append(f"--json and --figure name the same file {args.json}")
    if any(problems):  # found before the model runs, not after
        errors.print(Text(f"error: {next(p for p in problems if p)}"), style="red")
        return 2
    try:
        with progress_line(errors) as say:
            report = run_empirical(args.text, args.max_tokens, progress=say)
    except BadInput as error:
        errors.print(Text(f"error: {error}"), style="red")
        return 2
    for table in empirical_tables(report):
        console.print(table)
    if args.json:
        text = json.dumps(report.as_json(), indent=2, allow_nan=False) + "\n"
        if not _written(errors, args.json, write_atomically, args.json, text):
            return 2
    if args.figure:
        from .plots import empirical_figure

        if not _written(errors, args.figure, empirical_figure, report, args.figure):
            return 2
        console.print(Text(f"wrote {args.figure}"))
    return 0


def _mutate(paths: list[str], args, console: Console, errors: Console) -> int:
    from .mutation import run_mutation
    from .numeric import NumericSettings
    from .runner import VerifySettings
    from .terminal import mutation_summary

    derivations, status = _load(paths, errors)
    settings = VerifySettings(monte_carlo=False, numeric=NumericSettings(dimensions=(1, 2, 3)),
                              models=args.models, budget=args.budget)
    with progress_line(errors) as say:
        report = run_mutation(derivations, settings, progress=say)
    mutation_summary(report, console)
    return status or (1 if report.survivors else 0)


def _scaling(args, console: Console, errors: Console) -> int:
    from .models import MODELS
    from .report import write_atomically
    from .samplevalues import UnsupportedForSampling
    from .scaling import DEFAULT_MODELS, scaling
    from .terminal import scaling_table

    if min(args.dims + args.ns) < 2 or args.samples < 2:
        errors.print("error: --d, --n need values >= 2 and --samples at least 2", style="red")
        return 2
    rows = []
    with progress_line(errors) as say:
        for name in args.models or DEFAULT_MODELS:
            say(f"sampling rows under {name}")
            try:
                rows.extend(scaling(MODELS[name], args.dims, args.ns, args.samples))
            except UnsupportedForSampling as error:
                errors.print(Text(f"error: scaling --model {name}: {error}"), style="red")
                return 2
    console.print(scaling_table(rows))
    if args.json:
        text = json.dumps([_scaling_json(r) for r in rows], indent=2) + "\n"
        if not _written(errors, args.json, write_atomically, args.json, text):
            return 2
    if args.plot:
        from .plots import PlottingUnavailable, scaling_figures

        try:
            for path in scaling_figures(rows, args.plot):
                console.print(Text(f"wrote {path}"))
        except PlottingUnavailable as error:
            errors.print(Text(f"error: {error}"), style="red")
            return 2
    disagreements = [r for r in rows if not all(r.agreement.values())]
    return 1 if disagreements else 0


def _scaling_json(row) -> dict:
    return {"model": row.model, "scale": row.scale, "d": row.d, "n": row.n,
            "logit_sd": row.logit_sd,
            "estimates": {k: {"mean": v.mean, "standard_error": v.error}
                          for k, v in row.estimates.items()},
            "gaussian_large_n": row.gaussian_limits,
            "agrees": {k: bool(v) for k, v in row.agreement.items()}}


def _latex(paths: list[str], output: Path, console: Console, errors: Console) -> int:
    from .latex import document
    from .publish import resting_on
    from .report import write_atomically

    derivations, status = _load(paths, errors)
    if not _written(errors, output, output.mkdir, 0o777, True, True):
        return 2
    for item, stem in zip(derivations, file_stems([d.name for d in derivations])):
        target = output / f"{stem}.tex"
        if not _written(errors, target, write_atomically, target,
                        document(item, assumptions=resting_on(item))):
            return 2
        note = "" if stem == item.name else f" (for {item.name}, from {item.file})"
        console.print(Text(f"wrote {target}{note}"))
    return status


def _report(args, paths: list[str], console: Console, errors: Console) -> int:
    """Check the derivations, then write the report in each language asked for (and compile
    it): a file that does not load is reported and left out, the others still appear."""
    import shutil

    from .errors import BadInput
    from .isolation import verify_paths
    from .publish import Checked, CompileError, compile_pdf, report_document
    from .report import write_atomically
    from .runner import VerifySettings, rebuilt

    pairs: list = []
    with progress_line(errors) as say:
        run = verify_paths(paths, VerifySettings(monte_carlo=not args.no_monte_carlo),
                           lambda path, _: say(f"checked {path}"), pairs)
    for failed in run.derivations:
        if failed.error:
            errors.print(Text(f"error: {failed.error}"), style="red")
    # each derivation as it was sealed and checked, rebuilt here: no user code runs again
    checked = []
    for item, report in pairs:
        try:
            checked.append(Checked(rebuilt(item), report))
        except BadInput:  # its checker said so, printed above (review round 60)
            continue
    figures_from = args.figures or Path("docs/figures")
    figures = sorted(figures_from.glob("*.png")) if figures_from.is_dir() else []
    if not _written(errors, args.output, args.output.mkdir, 0o777, True, True):
        return 2
    if figures:
        (args.output / "figures").mkdir(exist_ok=True)
        for figure in figures:
            shutil.copy(figure, args.output / "figures" / figure.name)
    outcome = run.exit_code
    for lang in args.languages or ["en"]:
        tex = args.output / f"report-{lang}.tex"
        if not _written(errors, tex, write_atomically, tex,
                        report_document(checked, lang, figures)):
            return 2
        console.print(Text(f"wrote {tex}"))
        if args.pdf:
            try:
                console.print(Text(f"wrote {compile_pdf(tex, lang)}"))
            except CompileError as error:
                errors.print(Text(f"error: {error}"), style="red")
                outcome = max(outcome, 2)
    return outcome


def file_stems(names: list[str]) -> list[str]:
    """A file name inside the output folder for each derivation name: only letters, digits,
    '.', '_' and '-' (so no name reaches outside the folder), made unique with -2, -3, ..."""
    stems, taken = [], set()
    for name in names:
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "derivation"
        unique, count = stem, 1
        while unique in taken:
            count += 1
            unique = f"{stem}-{count}"
        taken.add(unique)
        stems.append(unique)
    return stems


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":  # python -m sdpa_proofs.cli, as python -m sdpa_proofs
    run()
