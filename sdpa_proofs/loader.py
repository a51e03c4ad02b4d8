"""Finding and loading derivation files: any .py file whose module defines Derivation objects."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from .budget import BudgetExceeded, time_budget
from .derivation import Derivation

LOAD_BUDGET = 60.0  # seconds to run one derivation file


@dataclass
class LoadError:
    """A file (or path) that could not be turned into derivations, with where and why."""

    file: str
    message: str
    empty: bool = False  # the file ran fine but defines no Derivation


def discover(paths: list[str]) -> tuple[list[Path], list[LoadError]]:
    """Derivation files under ``paths`` (files as given, folders searched recursively for
    .py files not starting with an underscore), and the paths that could not be read."""
    files: list[Path] = []
    errors: list[LoadError] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.py") if not p.name.startswith("_")))
        elif path.is_file():
            if path.suffix != ".py":
                errors.append(LoadError(raw, "not a Python file (derivations are .py files)"))
            else:
                files.append(path)
        else:
            errors.append(LoadError(raw, "no such file or folder"))
    return list(dict.fromkeys(files)), errors


def load_file(path: Path) -> list[Derivation] | LoadError:
    """Run the file as a module and collect its module-level Derivation objects."""
    name = f"sdpa_derivation_{abs(hash(str(path.resolve())))}"
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return LoadError(str(path), f"cannot read: {error}")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as error:
        return LoadError(f"{path}:{error.lineno}", f"syntax error: {error.msg}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        with time_budget(LOAD_BUDGET):  # a file that loops forever must not hang the run
            exec(code, module.__dict__)
    except BudgetExceeded:
        return LoadError(str(path), f"loading did not finish within {LOAD_BUDGET:g} s")
    except Exception as error:  # a user's file may raise anything; report it, keep going
        return LoadError(_location_in(path, error), f"{type(error).__name__}: {error}")
    finally:
        sys.path.remove(str(path.parent.resolve()))
    # derivations imported from other files (to cite them) belong to those files
    found = {id(v): (key, v) for key, v in vars(module).items()
             if isinstance(v, Derivation) and Path(v.file).resolve() == path.resolve()}
    if not found:
        return LoadError(str(path), "defines no Derivation at module level", empty=True)
    if len(found) > 1:  # several claims in one file: tell them apart by variable name
        for key, derivation in found.values():
            if derivation.name == path.stem:
                derivation.name = f"{path.stem}.{key}"
    return [derivation for _, derivation in found.values()]


def _location_in(path: Path, error: BaseException) -> str:
    """file:line of the innermost traceback frame in ``path`` (the user's line, not ours)."""
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    return f"{path}:{line}" if line else str(path)
