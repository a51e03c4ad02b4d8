"""Finding derivation files, and running one (only ever inside a worker process of its own).

What a derivation file is gets decided before anything runs: a .py file, not a helper (_*.py),
outside virtual environments and caches, whose syntax tree calls ``Derivation(...)``.
"""

from __future__ import annotations

import ast
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from .derivation import Derivation
from .errors import BudgetExceeded

#: folders never searched: environments, caches and version control
SKIPPED_FOLDERS = {".venv", "venv", "env", ".env", ".tox", ".nox", "site-packages", "__pycache__",
                   "node_modules", ".git", ".hg", "build", "dist", ".eggs"}


@dataclass
class LoadError:
    """A file (or path) that could not be turned into derivations, with where and why."""

    file: str
    message: str
    empty: bool = False  # the file ran fine but defines no Derivation


def discover(paths: list[str]) -> tuple[list[Path], list[LoadError]]:
    """Derivation files under ``paths``: files as given; folders searched recursively for .py
    files that call Derivation(...), skipping helpers (_*.py), hidden folders, virtual
    environments and caches.  Paths that cannot be read are errors."""
    files: list[Path] = []
    errors: list[LoadError] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*.py")):
                relative = candidate.relative_to(path).parts[:-1]
                if candidate.name.startswith("_") or any(
                        part in SKIPPED_FOLDERS or part.startswith(".") for part in relative):
                    continue
                if calls_derivation(candidate) is not False:
                    files.append(candidate)
        elif path.is_file():
            if path.suffix != ".py":
                errors.append(LoadError(raw, "not a Python file (derivations are .py files)"))
            else:
                files.append(path)
        else:
            errors.append(LoadError(raw, "no such file or folder"))
    return list(dict.fromkeys(files)), errors


def calls_derivation(path: Path) -> bool | None:
    """Whether the file's syntax tree calls Derivation(...) (None: it cannot be parsed, so
    the loader will report why)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", None)
            if name == "Derivation":
                return True
    return False


def run_file(path: Path, debug: bool = False) -> list[Derivation] | LoadError:
    """Run the file as a module and collect its module-level Derivation objects.  This runs the
    user's code: call it only in a worker process made for this one file.  With ``debug`` an
    error keeps its traceback."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return LoadError(str(path), f"cannot read: {error}")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as error:
        return LoadError(f"{path}:{error.lineno}", f"syntax error: {error.msg}")
    module = type(sys)(f"sdpa_derivation_{path.stem}")
    module.__file__ = str(path)
    sys.path.insert(0, str(path.parent.resolve()))  # helper modules beside the file
    try:
        exec(code, module.__dict__)
    except BudgetExceeded:
        raise  # the loading budget is the caller's to report
    except SystemExit as error:
        return LoadError(_location_in(path, error),
                         f"the file exits while loading (SystemExit({error.code!r}))")
    except BaseException as error:  # noqa: BLE001 - a user's file may raise anything
        message = f"{type(error).__name__}: {error}"
        if debug:
            message += "\n" + "".join(traceback.format_exception(error))
        return LoadError(_location_in(path, error), message)
    # derivations imported from other files (to cite them) belong to those files
    found = {id(v): (key, v) for key, v in vars(module).items()
             if isinstance(v, Derivation) and _same_file(v.file, path)}
    if not found:
        built = calls_derivation(path)
        message = ("builds a Derivation but exposes none at module level (keep each in a "
                   "module-level variable)") if built else "defines no Derivation at module level"
        return LoadError(str(path), message, empty=not built)
    if len(found) > 1:  # several claims in one file: tell them apart by variable name
        for key, derivation in found.values():
            if derivation.name == path.stem:
                derivation.name = f"{path.stem}.{key}"
    return [derivation for _, derivation in found.values()]


def _same_file(file: object, path: Path) -> bool:
    try:
        return Path(str(file)).resolve() == path.resolve()
    except (OSError, ValueError):
        return False


def _location_in(path: Path, error: BaseException) -> str:
    """file:line of the innermost traceback frame in ``path`` (the user's line, not ours)."""
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if _same_file(frame.filename, path):
            line = frame.lineno
    return f"{path}:{line}" if line else str(path)
