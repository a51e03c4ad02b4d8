"""In CI, trusted: the pytest plugin, JUnit, time budgets, bad input and mutation testing."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from sources import GOOD, WRONG_STEP, write

from sdpa_proofs.cli import main
from sdpa_proofs.isolation import load_paths
from sdpa_proofs.mutation import run_mutation
from sdpa_proofs.options import allowance

ROOT = Path(__file__).resolve().parent.parent
WRONG = WRONG_STEP.replace('too_big = ', 'wrong = ')
HANGING = '''
from sympy import Eq, Sum
from sdpa_proofs import Derivation, E, Rule, Step, d, i, k, q


class Ponder(Rule):
    """A 'simplification' that never finishes."""
    name = "ponder"

    def rewrite(self, node, ctx):
        while True:
            pass


hanging = Derivation(
    claim=Eq(E(Sum(q[i] * k[i], (i, 1, d))), Sum(E(q[i] * k[i]), (i, 1, d))),
    models=["independent-normal"],
    steps=[Step(Sum(E(q[i] * k[i]), (i, 1, d)), Ponder())])
'''



def pytest_run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, capture_output=True, text=True)


def test_pytest_collects_derivation_files_and_shows_counterexamples(tmp_path):
    write(tmp_path, "good.py", GOOD)
    write(tmp_path, "wrong.py", WRONG)
    write(tmp_path, "broken.py", "from sdpa_proofs import Derivation\ndef broken(:\n")
    write(tmp_path, "helper.py", "x = 1\n")  # no Derivation( in it: not collected
    junit = tmp_path / "junit.xml"
    completed = pytest_run(str(tmp_path), "--sdpa", "--sdpa-no-monte-carlo", f"--junitxml={junit}",
                           "-o", "junit_family=xunit1", cwd=tmp_path)
    output = completed.stdout
    assert completed.returncode == 1, output
    assert "1 passed" in output and "2 failed" in output
    assert "wrong: step 1 (variance_scaling)" in output and "sides differ at d = 2" in output
    assert "broken.py:2: syntax error" in output
    suite = ET.parse(junit).getroot().find("testsuite")
    names = {case.get("name") for case in suite.iter("testcase")}
    assert {"good", "wrong", "broken"} <= names
    properties = [p.get("name") for p in suite.iter("property")]
    assert "independent-normal step 1 (linearity)" in properties


@pytest.mark.parametrize("option, why", [("--sdpa-digits=-20", "digits must be between 1"),
                                         ("--sdpa-digits=0", "digits must be between 1"),
                                         ("--sdpa-budget=nan", "give a finite number"),
                                         ("--sdpa-model=nope", "unknown model 'nope'")])
def test_the_plugin_refuses_the_values_the_command_line_refuses(tmp_path, option, why):
    """A digit count the CLI refuses made every step of a true derivation fail its numeric
    check under the plugin (review round 61): it is a usage error there too, before any check."""
    write(tmp_path, "good.py", GOOD)
    completed = pytest_run(str(tmp_path), "--sdpa", "--sdpa-no-monte-carlo", option,
                           cwd=tmp_path)
    assert completed.returncode == 4, completed.stdout[-2000:]  # pytest's usage error
    assert why in completed.stderr and option.split("=")[0] in completed.stderr
    flag, value = option.removeprefix("--sdpa-").split("=")
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", str(tmp_path), f"--{flag}", value])
    assert exit_info.value.code == 2


def test_the_plugin_reads_a_budget_of_0_as_none_like_the_command_line():
    from sdpa_proofs.pytest_plugin import settings_from

    class Config:
        def __init__(self, **given):
            self.given = given

        def getoption(self, name):
            defaults = {"sdpa_digits": 30, "sdpa_model": None, "sdpa_no_monte_carlo": True,
                        "sdpa_strict": False, "sdpa_allow_undecided": False}
            return {**defaults, **self.given}[name]

    assert settings_from(Config(sdpa_budget=allowance("0"))).budget is None
    assert settings_from(Config(sdpa_budget=allowance("2.5"))).budget == 2.5


@pytest.mark.slow
def test_pytest_runs_the_bundled_catalogue_with_selection_and_xdist():
    completed = pytest_run("derivations/", "--sdpa", "--sdpa-no-monte-carlo", "-k", "variance",
                           "-n", "2",
                           "-q", cwd=ROOT)
    assert completed.returncode == 0, completed.stdout[-3000:]
    assert "passed" in completed.stdout and "failed" not in completed.stdout


def test_junit_report_from_verify(tmp_path, capsys):
    write(tmp_path, "good.py", GOOD)
    write(tmp_path, "wrong.py", WRONG)
    write(tmp_path, "broken.py", "import no_such_module_x\n" + GOOD)
    junit, report = tmp_path / "out.xml", tmp_path / "out.json"
    code = main(["verify", str(tmp_path), "--no-monte-carlo", "--junit", str(junit),
                 "--json", str(report)])
    assert code == 2
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    summary = json.loads(report.read_text())["summary"]
    assert int(suite.get("tests")) == len(cases) == summary["derivations"] == 3
    assert int(suite.get("failures")) == summary["failed"] == 1
    assert int(suite.get("errors")) == summary["errors"] == 1
    for case in cases:
        assert case.get("name") and case.get("classname") and float(case.get("time")) >= 0
    failure = next(c for c in cases if c.get("name") == "wrong").find("failure")
    assert "step 1 (variance_scaling)" in failure.get("message")
    assert "sides differ at d = 2" in failure.text
    error = next(c for c in cases if c.find("error") is not None).find("error")
    assert "ModuleNotFoundError" in error.get("message")


def test_a_hanging_check_ends_undecided_within_its_budget(tmp_path, capsys):
    import time

    write(tmp_path, "hanging.py", HANGING)
    started = time.perf_counter()
    code = main(["verify", str(tmp_path), "--no-monte-carlo", "--budget", "1",
                 "--json", str(tmp_path / "r.json")])
    elapsed = time.perf_counter() - started
    assert code == 1 and elapsed < 30
    step = json.loads((tmp_path / "r.json").read_text())["derivations"][0]["models"][0]["steps"][0]
    assert step["rule_check"]["status"] == "undecided"
    assert "budget" in step["rule_check"]["reason"]
    assert "undecided" in capsys.readouterr().out
    assert main(["verify", str(tmp_path), "--no-monte-carlo", "--budget", "1",
                 "--allow-undecided"]) == 0


BAD_INPUT = {
    "mismatched dimensions": (GOOD.replace("Sum(E(q[i]) * E(k[i]), (i, 1, d))",
                                           "Sum(E(q[i]) * E(k[i]), (i, 1, d - 1))"),
                              "step 2: the sum over i runs from 1 to d - 1"),
    "coordinate with two indices": (GOOD.replace("E(q[i]) * E(k[i])", "E(q[i, i]) * E(k[i])"),
                                    "has 2 indices"),
    "vector the model does not know": (GOOD.replace('models=["independent-normal"]',
                                                    'models=["gaussian-logits"]'),
                                       "has no law for the random vector k"),
    "exception inside a step": (GOOD.replace('"zero_mean")', 'Boom())').replace(
        "mean = ", "from sdpa_proofs import Rule\n\nclass Boom(Rule):\n    name = 'boom'\n\n"
                   "    def rewrite(self, node, ctx):\n        return 1 / 0\n\n\nmean = "),
        "step 3: ZeroDivisionError"),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUT))
def test_bad_input_names_file_line_and_step(kind, tmp_path, capsys):
    source, message = BAD_INPUT[kind]
    path = write(tmp_path, "bad.py", source)
    write(tmp_path, "good.py", GOOD)
    code = main(["verify", str(tmp_path), "--no-monte-carlo"])
    output = capsys.readouterr()
    text = output.out + output.err
    assert code == 2
    assert message in text and str(path) in text
    assert "Traceback" not in text
    assert "1 of 2 derivations verified" in text  # the good file still ran


def test_debug_shows_the_traceback(tmp_path):
    source, _ = BAD_INPUT["exception inside a step"]
    write(tmp_path, "bad.py", source)
    completed = subprocess.run([sys.executable, "-m", "sdpa_proofs", "verify", str(tmp_path),
                                "--no-monte-carlo", "--debug"], capture_output=True, text=True)
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0 and "Traceback" in output
    assert "ZeroDivisionError" in output


@pytest.mark.slow
def test_mutation_testing_kills_every_non_equivalent_mutant():
    """Numbers, operators, exponents, bounds, rule names and i = j / i != j mutated in the
    seed's derivations: every mutant that changes the mathematics is rejected, and every
    survivor is shown equivalent (same exact value, still justified by its rule)."""
    report = _every_mutant_killed(
        [str(ROOT / "derivations" / f"{name}.py") for name in
         ("mean_zero", "variance", "standard_deviation", "scaled_variance", "over_shrink")],
        {"number", "operator", "exponent", "bound", "rule", "i=j/i!=j"})
    assert report.kill_rate == 1.0
    for r in report.equivalent:
        assert r.equivalent_because


def _every_mutant_killed(files: list[str], kinds: set):
    """Mutation testing of the files: mutants of each kind made, none surviving, and far more
    killed than found equivalent."""
    report = run_mutation(load_paths(files))
    assert kinds <= {r.mutant.kind for r in report.results}
    assert not report.survivors, [(r.mutant.derivation.name, r.mutant.step,
                                   r.mutant.description) for r in report.survivors]
    assert len(report.killed) > 5 * len(report.equivalent)
    return report


@pytest.mark.slow
def test_mutation_testing_of_the_fourth_moment():
    """Four indices, Isserlis' pairings as deltas, sifting: a changed count, power or bound
    and a swapped rule are all rejected."""
    _every_mutant_killed([str(ROOT / "derivations" / f"{name}.py")
                          for name in ("fourth_moment", "kurtosis")],
                         {"number", "operator", "exponent", "bound", "rule"})


@pytest.mark.slow
def test_mutation_testing_of_the_softmax_bounds():
    """The inequality chains: turned relations, shortened maxima, changed powers and swapped
    bound rules are all rejected; the survivors are equivalent."""
    _every_mutant_killed([str(ROOT / "derivations" / "softmax" / f"jacobian_trace_{side}.py")
                          for side in ("upper", "lower")],
                         {"number", "exponent", "bound", "rule", "relation"})


def test_a_file_that_never_finishes_loading_is_bad_input(tmp_path, monkeypatch, capsys):
    import sdpa_proofs.isolation as isolation

    monkeypatch.setattr(isolation, "LOAD_BUDGET", 1.0)
    write(tmp_path, "forever.py", "while True:\n    pass\n" + GOOD)
    write(tmp_path, "good.py", GOOD)
    assert main(["verify", str(tmp_path), "--no-monte-carlo"]) == 2
    output = capsys.readouterr()
    assert "loading did not finish within 1 s" in output.out + output.err
