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


def test_eulers_number_and_renamed_indices_print_apart_from_what_they_look_like():
    """e beside E[q_1] printed as "E·E[q_1]"; the checks' bound indices renamed apart printed
    as "Σ_{i≠i} q_i·q_i" (review round 81): they take primes where they print alike."""
    import sympy as sp

    from sdpa_proofs import E, d, i, q
    from sdpa_proofs.text import show

    assert show(sp.E * E(q[1])) == "e·E[q_1]"
    a, b = (sp.Dummy("i", integer=True, positive=True) for _ in range(2))
    printed = show(sp.Sum(q[i] * q[a] * q[b] ** 2, (a, 1, d), (b, 1, d)))
    assert "q_i·q_i′·q_i′′²" in printed and {"Σ_{i′=1..d}", "Σ_{i′′=1..d}"} <= set(
        printed.split()), printed
    assert show(sp.Sum(q[a] * q[b], (a, 1, d), (b, 1, d))).count("′") == 2  # i and i′, twice


def test_a_derivation_monte_carlo_cannot_sample_says_why(tmp_path):
    """A claim with a free index is not sampled: the summary said "n/a" and nothing more."""
    source = ("from sympy import Eq\nfrom sdpa_proofs import Derivation, Step, Var, i, q, sigma_q\n"
              "free = Derivation(claim=Eq(Var(q[i]), sigma_q**2), models=['independent-normal'],"
              "\n                  steps=[Step(sigma_q**2, 'model_variance')])\n")
    (tmp_path / "free.py").write_text(source)
    out = io.StringIO()
    render(verify_paths([str(tmp_path / "free.py")], VerifySettings(), lambda *_: None),
           Console(width=200, file=out, force_terminal=False))
    assert "free under independent-normal: Monte Carlo n/a: not sampled: free index in q_i" \
        in out.getvalue(), out.getvalue()


def test_a_statement_for_i_not_j_says_why_monte_carlo_is_not_run(tmp_path):
    """With distinct=[(i, j)] the Monte Carlo column read "not run" with no reason, and the
    indices were not listed as parameters (review round 88)."""
    source = ("from sympy import Eq\nfrom sdpa_proofs import Derivation, E, Step, i, j, k, q\n"
              "off = Derivation(claim=Eq(E(q[i] * k[i] * q[j] * k[j]), 0), distinct=[(i, j)],\n"
              "    models=['independent-normal'],\n"
              "    steps=[Step(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), 'independence'),\n"
              "           Step(0, 'zero_mean')])\n")
    (tmp_path / "off.py").write_text(source)
    out = io.StringIO()
    run = verify_paths([str(tmp_path / "off.py")], VerifySettings(), lambda *_: None)
    render(run, Console(width=200, file=out, force_terminal=False))
    assert "off under independent-normal: Monte Carlo n/a: not sampled: a statement about " \
           "generic indices (i, j)" in out.getvalue(), out.getvalue()
    (report,) = run.derivations
    assert report.statement.endswith("; for i ≠ j") and report.conditions == []


def test_a_models_monte_carlo_line_says_what_monte_carlo_found():
    """'Monte Carlo under independent-normal: mm1 failed' read as a Monte Carlo verdict when
    Monte Carlo had found the claim true and another check had failed it (review round 89)."""
    from sdpa_proofs.report import DerivationReport, ModelReport
    from sdpa_proofs.terminal import file_line
    from sdpa_proofs.verdicts import MonteCarloResult

    sampled = ModelReport(model="independent-normal",
                          monte_carlo=[MonteCarloResult(64, 10, 0.0, -1.0, 1.0, 0.0, "pass")])
    report = DerivationReport(name="wrong_step", file="wrong.py", models=[sampled])
    line = file_line("Monte Carlo under independent-normal", [report])
    assert line.plain == "Monte Carlo under independent-normal: wrong_step 1/1 ok"
