"""Moments on demand: closed forms for symbolic d, values at a concrete d, Monte Carlo, clear
errors for questions that mean nothing, and the `moment` command."""

import json

import pytest
import sympy as sp

from sdpa_proofs import (
    Var,
    alpha,
    beta,
    d,
    dot_product,
    get_model,
    moment,
    sigma_k,
    sigma_q,
)
from sdpa_proofs.cli import main
from sdpa_proofs.errors import BadInput
from sdpa_proofs.numeric import NumericSettings, numeric_check


def test_the_seed_variance_and_the_shared_factor_by_hand():
    """Var(S) = d sigma_q^2 sigma_k^2 for independent coordinates (the seed), and
    2 alpha^2 beta^2 d^2 + d(alpha^2 sigma_k^2 + beta^2 sigma_q^2 + sigma_q^2 sigma_k^2) with
    one shared factor (three Wick pairings through z for i != j, minus E[S]^2)."""
    seed = moment("Var(S)", "independent-normal").closed_form
    assert sp.expand(seed - d * sigma_q**2 * sigma_k**2) == 0
    shared = moment("Var[S]", "shared-factor", d=64)
    by_hand = 2 * alpha**2 * beta**2 * d**2 + d * (alpha**2 * sigma_k**2 + beta**2 * sigma_q**2
                                                   + sigma_q**2 * sigma_k**2)
    assert sp.expand(shared.closed_form - by_hand) == 0
    point = get_model("shared-factor").parameter_points[0]
    assert shared.value == by_hand.xreplace({d: 64, **point})


def test_a_general_gaussian_closed_form_agrees_with_quadrature():
    """The closed form as sums of covariance entries, checked by the numeric check (Gauss
    quadrature over the concrete covariance patterns at d = 1, 2, 3), another method."""
    model = get_model("gaussian-means")
    answer = moment("Var(S)", model)
    assert numeric_check(Var(dot_product), answer.closed_form, model, NumericSettings()).passed


def test_expectation_brackets_and_indices_are_read_as_meant():
    """E[q_1 k_1] = Cov(q_1, k_1) = rho sigma_q sigma_k for centred correlated pairs."""
    from sdpa_proofs import rho

    answer = moment("E[q[1]*k[1]]", "correlated-normal")
    assert sp.expand(answer.closed_form - rho * sigma_q * sigma_k) == 0


@pytest.mark.parametrize("question, says", [
    ("Var(T)", "T means nothing under independent-normal"),
    ("S", "asks for no moment"),
    ("q[1]*E(S)", "stands outside any moment"),
    ("Var(S", "cannot read"),
])
def test_questions_that_mean_nothing_are_errors_that_say_why(question, says):
    with pytest.raises(BadInput, match=says):
        moment(question, "independent-normal")


def test_the_json_answer_parses_back():
    from sdpa_proofs.questions import parse_question

    answer = moment("Var(S)", "shared-factor", d=8)
    data = answer.as_json()
    assert parse_question(data["closed_form"]) == answer.closed_form
    assert sp.Rational(data["value"]) == answer.value


def test_the_moment_command(tmp_path, capsys):
    target = tmp_path / "answer.json"
    code = main(["moment", "Var(S)", "--model", "shared-factor", "--d", "64", "--monte-carlo",
                 "--json", str(target)])
    output = capsys.readouterr().out
    assert code == 0 and "Var(S) under shared-factor" in output and "Monte Carlo" in output
    data = json.loads(target.read_text())
    assert data["monte_carlo"]["status"] == "pass"
    assert data["monte_carlo"]["ci_low"] <= float(data["value"].split("/")[0]) / float(
        data["value"].split("/")[1]) <= data["monte_carlo"]["ci_high"]
    assert main(["moment", "Var(S)", "--monte-carlo"]) == 2
    assert "--monte-carlo needs --d" in capsys.readouterr().err
    assert main(["moment", "Var(T)"]) == 2
    assert "T means nothing" in capsys.readouterr().err
    assert main(["moment", "Var(S)", "--latex"]) == 0
    assert r"\operatorname{Var}" in capsys.readouterr().out


def test_an_answer_shows_itself_in_jupyter_as_mathematics():
    answer = moment("Var(S)", "shared-factor", d=8)
    shown = answer._repr_markdown_()
    assert shown.startswith("Under `shared-factor`: $") and answer.latex() in shown
    assert "at d = 8" in shown


def test_a_derivation_verifies_itself_as_the_runner_does():
    from pathlib import Path

    from sdpa_proofs import VerifySettings, verify_derivation
    from sdpa_proofs.isolation import load_file

    (derivation,) = load_file(Path(__file__).parent.parent / "derivations" / "mean_zero.py")
    settings = VerifySettings(monte_carlo=False)
    mine, runners = derivation.verify(settings), verify_derivation(derivation, settings)
    assert mine.status == runners.status == "verified"
    assert [m.model for m in mine.models] == [m.model for m in runners.models]
    assert "| 1 |" in mine._repr_markdown_()


def test_the_shell_asks_a_moment_under_a_model_of_ones_own(tmp_path, capsys):
    """FILE.py:VARIABLE names a model defined in a file; the closed form is the hand one."""
    from sdpa_proofs.cli import main

    (tmp_path / "mine.py").write_text(
        "from sympy import Symbol\nfrom sdpa_proofs import from_covariance, q\n"
        "r, s = Symbol('r', real=True), Symbol('s', positive=True)\n"
        "pairs = from_covariance([[s**2, r * s**2], [r * s**2, s**2]], means={q: 1},"
        " name='pairs')\n")
    target = tmp_path / "a.json"
    code = main(["moment", "E[S]", "--model", f"{tmp_path / 'mine.py'}:pairs", "--json",
                 str(target)])
    assert code == 0 and "E[S] under pairs = d·r·s²" in capsys.readouterr().out
    assert json.loads(target.read_text())["model"] == "pairs"
    assert main(["moment", "E[S]", "--model", f"{tmp_path / 'mine.py'}:missing"]) == 2
    assert "missing" in capsys.readouterr().err
