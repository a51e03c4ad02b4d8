"""The summary fits any terminal: every status stays on screen whole, at any width, and no line
is longer than the terminal (rich would crop it)."""

import io
from pathlib import Path

import pytest
from rich.console import Console

from sdpa_proofs.isolation import verify_paths
from sdpa_proofs.runner import VerifySettings
from sdpa_proofs.terminal import render

ROOT = Path(__file__).resolve().parent.parent / "derivations"


@pytest.fixture(scope="module")
def run():
    paths = [str(ROOT / "seed_audit" / "variance_is_second_moment.py"),
             str(ROOT / "mean_zero.py"), str(ROOT / "no_such_file.py")]
    return verify_paths(paths, VerifySettings(monte_carlo=False), lambda *_: None)


@pytest.mark.parametrize("width", [50, 80, 100, 120, 132, 200])
def test_the_summary_fits_the_terminal_and_keeps_every_status_whole(run, width):
    out = io.StringIO()
    render(run, Console(width=width, file=out, force_terminal=False))
    summary = out.getvalue().split("error:")[0]  # the findings below are one line each
    assert max(len(line) for line in summary.splitlines()) <= width
    flat = " ".join(summary.split())  # wrapped between words, never inside one
    for status in ("refuted at 2, as expected", "verified", "error"):
        assert status in flat, (width, summary)
    for name in ("variance_is_second_moment", "mean_zero"):
        assert name in flat
