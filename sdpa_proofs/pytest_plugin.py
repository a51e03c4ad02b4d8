"""pytest plugin: derivation files as test items, one per derivation.  Opt-in, as pytest-mypy is:

    pytest --sdpa derivations/            # check the derivation files among the given paths
    [tool.pytest.ini_options]
    sdpa_paths = ["derivations"]          # or always, for the files under these folders

A derivation file is a .py file that calls ``Derivation(...)`` (decided from its syntax tree,
without running it) and is not a test module or a helper (_*.py).  Collection runs each file in
a worker process of its own and each derivation is checked in another, so collecting runs no
user code in pytest's process.  A file that does not load becomes one failing item naming the
file and line; the other derivations still run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .budget import DEFAULT_BUDGET
from .options import allowance, digits, model_name

# The engine (SymPy, mpmath, NumPy) is imported only when the plugin is switched on, so that
# it costs an unrelated pytest run nothing.


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sdpa-proofs", "checking derivation files")
    group.addoption("--sdpa", action="store_true",
                    help="collect derivation files (.py files calling Derivation(...)) as tests")
    group.addoption("--sdpa-digits", type=digits, default=30,
                    help="significant digits the numerical check requires (default 30)")
    group.addoption("--sdpa-model", action="append", default=None, metavar="NAME",
                    type=model_name,
                    help="check under this model instead of the derivation's own (repeatable)")
    group.addoption("--sdpa-no-monte-carlo", action="store_true",
                    help="skip the Monte Carlo check of the claims")
    group.addoption("--sdpa-budget", type=allowance, default=DEFAULT_BUDGET, metavar="SECONDS",
                    help=f"time budget of each check (default {DEFAULT_BUDGET:g}; 0: none); a "
                         "check that runs out is undecided")
    group.addoption("--sdpa-allow-undecided", action="store_true",
                    help="let steps that stay undecided pass")
    group.addoption("--sdpa-strict", action="store_true",
                    help="fail derivations verified only assuming user rules or lemmas")
    parser.addini("sdpa_paths", type="paths", default=[],
                  help="folders whose derivation files are always collected")


def is_derivation_file(path: Path) -> bool:
    from .loader import calls_derivation

    name = path.name
    if path.suffix != ".py" or name.startswith(("_", "test_")) or name.endswith("_test.py") \
            or name == "conftest.py":
        return False
    return calls_derivation(path) is not False


def _enabled_for(config: pytest.Config, path: Path) -> bool:
    if config.getoption("sdpa"):
        return True
    return any(path.resolve().is_relative_to(Path(folder).resolve())
               for folder in config.getini("sdpa_paths"))


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if _enabled_for(parent.config, file_path) and is_derivation_file(file_path):
        return DerivationFile.from_parent(parent, path=file_path)
    return None


class DerivationFile(pytest.File):
    def collect(self):
        from .isolation import load_sealed
        from .loader import LoadError

        loaded = load_sealed(self.path, settings_from(self.config))
        if isinstance(loaded, LoadError) and loaded.empty:
            return  # it mentions Derivation but defines none: a helper, not a derivation file
        if isinstance(loaded, LoadError):
            yield BrokenFile.from_parent(self, name=self.path.stem, error=loaded)
            return
        for sealed in loaded:
            yield DerivationItem.from_parent(self, name=sealed["name"], sealed=sealed)


def settings_from(config: pytest.Config):
    from .numeric import NumericSettings
    from .runner import VerifySettings

    settings = VerifySettings(numeric=NumericSettings(digits=config.getoption("sdpa_digits")),
                              models=config.getoption("sdpa_model"),
                              monte_carlo=not config.getoption("sdpa_no_monte_carlo"),
                              strict=config.getoption("sdpa_strict"))
    settings.budget = config.getoption("sdpa_budget")
    settings.allow_undecided = config.getoption("sdpa_allow_undecided")
    return settings


class DerivationFailure(Exception):
    def __init__(self, report):
        super().__init__(report.name)
        self.report = report


class DerivationItem(pytest.Item):
    def __init__(self, *, sealed: dict, **kwargs):
        super().__init__(**kwargs)
        self.sealed = sealed

    def runtest(self) -> None:
        from .isolation import check_in_worker
        from .report import ASSUMING, SUCCESS, UNDECIDED

        settings = settings_from(self.config)
        (report,) = check_in_worker(self.path, [self.sealed], settings)
        for assumption in report.assumptions:
            self.user_properties.append(("assumption", assumption))
        for model in report.models:  # every step, for JUnit properties and -rA summaries
            for step in model.steps:
                self.user_properties.append(
                    (f"{model.model} step {step.index} ({step.rule})",
                     f"symbolic {step.symbolic.status}, numeric {step.numeric_check.status}"
                     + (f", {step.numeric_check.digits:.0f} digits"
                        if step.numeric_check.digits is not None else "")))
        accepted = SUCCESS + ((UNDECIDED,) if settings.allow_undecided else ()) + \
            (() if settings.strict else (ASSUMING,))
        if report.status not in accepted:
            raise DerivationFailure(report)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, DerivationFailure):
            from .terminal import failure_details

            report = excinfo.value.report
            lines = [f"{report.name}: {report.statement}: {report.status}"]
            lines += [str(line) for line in failure_details(report)]
            return "\n".join(lines)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, int(self.sealed.get("line", 1)) - 1, f"derivation {self.name}"


class BrokenFile(pytest.Item):
    """A derivation file that does not load: one failing item with the loader's message."""

    def __init__(self, *, error, **kwargs):  # error: a loader.LoadError
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise DerivationFileError(f"{self.error.file}: {self.error.message}")

    def repr_failure(self, excinfo, style=None):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, 0, f"derivation file {self.path.name}"


class DerivationFileError(Exception):
    pass
