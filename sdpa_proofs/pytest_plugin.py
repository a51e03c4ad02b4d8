"""pytest plugin: derivation files are collected as test items, one per derivation.

    pytest derivations/                   # or any folder of derivation files
    pytest derivations/ -k variance -n 2  # selection and pytest-xdist work as usual

A .py file is a derivation file when it mentions ``Derivation``, is not a test module
(test_*.py, *_test.py, conftest.py) or a helper (_*.py), and defines Derivation objects when it
runs.  A file that does not load becomes one failing item naming the file and line, so the other
derivations still run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .derivation import Derivation
from .loader import LoadError, load_file
from .numeric import NumericSettings
from .report import SUCCESS, DerivationReport
from .runner import VerifySettings, verify_derivation
from .terminal import failure_details


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sdpa-proofs", "checking derivation files")
    group.addoption("--sdpa-digits", type=int, default=30,
                    help="significant digits the numerical check requires (default 30)")
    group.addoption("--sdpa-model", action="append", default=None, metavar="NAME",
                    help="check under this model instead of the derivation's own (repeatable)")
    group.addoption("--sdpa-no-monte-carlo", action="store_true",
                    help="skip the Monte Carlo check of the claims")
    group.addoption("--sdpa-budget", type=float, default=None, metavar="SECONDS",
                    help="time budget of each symbolic and numerical check")
    group.addoption("--sdpa-allow-undecided", action="store_true",
                    help="let steps that stay undecided pass")


def is_derivation_file(path: Path) -> bool:
    name = path.name
    if path.suffix != ".py" or name.startswith(("_", "test_")) or name.endswith("_test.py") \
            or name == "conftest.py":
        return False
    try:
        return "Derivation" in path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if is_derivation_file(file_path):
        return DerivationFile.from_parent(parent, path=file_path)
    return None


class DerivationFile(pytest.File):
    def collect(self):
        loaded = load_file(self.path)
        if isinstance(loaded, LoadError) and loaded.empty:
            return  # it mentions Derivation but defines none: a helper, not a derivation file
        if isinstance(loaded, LoadError):
            yield BrokenFile.from_parent(self, name=self.path.stem, error=loaded)
            return
        for derivation in loaded:
            yield DerivationItem.from_parent(self, name=derivation.name, derivation=derivation)


def settings_from(config: pytest.Config) -> VerifySettings:
    settings = VerifySettings(numeric=NumericSettings(digits=config.getoption("sdpa_digits")),
                              models=config.getoption("sdpa_model"),
                              monte_carlo=not config.getoption("sdpa_no_monte_carlo"))
    budget = config.getoption("sdpa_budget")
    if budget is not None:
        settings.budget = budget
    settings.allow_undecided = config.getoption("sdpa_allow_undecided")
    return settings


class DerivationFailure(Exception):
    def __init__(self, report: DerivationReport):
        super().__init__(report.name)
        self.report = report


class DerivationItem(pytest.Item):
    def __init__(self, *, derivation: Derivation, **kwargs):
        super().__init__(**kwargs)
        self.derivation = derivation

    def runtest(self) -> None:
        settings = settings_from(self.config)
        report = verify_derivation(self.derivation, settings)
        for model in report.models:  # every step, for JUnit properties and -rA summaries
            for step in model.steps:
                self.user_properties.append(
                    (f"{model.model} step {step.index} ({step.rule})",
                     f"symbolic {step.symbolic.status}, numeric {step.numeric_check.status}"
                     + (f", {step.numeric_check.digits:.0f} digits"
                        if step.numeric_check.digits is not None else "")))
        accepted = SUCCESS + (("undecided",) if settings.allow_undecided else ())
        if report.status not in accepted:
            raise DerivationFailure(report)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, DerivationFailure):
            report = excinfo.value.report
            lines = [f"{report.name}: {report.claim}: {report.status}"]
            lines += [str(line) for line in failure_details(report)]
            return "\n".join(lines)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, self.derivation.line - 1, f"derivation {self.name}"


class BrokenFile(pytest.Item):
    """A derivation file that does not load: one failing item with the loader's message."""

    def __init__(self, *, error: LoadError, **kwargs):
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
