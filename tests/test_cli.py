"""The command line as a user meets it: exit codes, the table, JSON, LaTeX and bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sources import GOOD, WRONG_STEP, write

from sdpa_proofs.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = str(ROOT / "derivations")





def run(*args, capsys):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


@pytest.fixture(scope="module")
def bundled_report(tmp_path_factory):
    """One full verify of the bundled catalogue, Monte Carlo included, shared by the tests."""
    target = tmp_path_factory.mktemp("report") / "r.json"
    completed = subprocess.run([sys.executable, "-m", "sdpa_proofs", "verify", BUNDLED,
                                "--json", str(target)], capture_output=True, text=True)
    return completed, json.loads(target.read_text())


INDEPENDENT_CLAIMS = {"mean_zero", "variance", "standard_deviation", "scaled_variance",
                      "over_shrink"}
SEED_AUDIT = {"mean_is_sum_of_covariances": "verified", "variance_is_second_moment": "refuted",
              "cross_terms_per_coordinate": "refuted", "entropy_floor_one_key": "refuted"}
REFUTED_AT = {"variance_is_second_moment": 2, "cross_terms_per_coordinate": 2,
              "entropy_floor_one_key": 1}
# resting on a lemma stated in its own file (that H is least at a corner of the range)
ASSUMING = {"entropy_floor": "verified_assuming"}


@pytest.mark.slow
def test_bundled_catalogue_verifies_with_json(bundled_report):
    completed, report = bundled_report
    assert completed.returncode == 0, completed.stdout + completed.stderr
    by_name = {d["name"]: d for d in report["derivations"]}
    assert INDEPENDENT_CLAIMS | set(SEED_AUDIT) <= set(by_name)
    for name in INDEPENDENT_CLAIMS:
        assert {m["model"] for m in by_name[name]["models"]} == {
            "independent-normal", "independent-uniform", "independent-rademacher",
            "independent-laplace"}
    for derivation in report["derivations"]:
        name = derivation["name"]
        expected = {**SEED_AUDIT, **ASSUMING}.get(name, "verified")
        assert derivation["status"] == expected, name
        if expected == "refuted":
            assert derivation["expected"] == f"refuted at step {REFUTED_AT[name]}"
            assert derivation["steps"][REFUTED_AT[name] - 1]["numeric"] == "fail"
            assert derivation["claim_held_in_monte_carlo"] is not True
            continue
        assert derivation["expected"] == "verified"
        for step in derivation["steps"]:
            assert step["symbolic"] == "pass" and step["numeric"] == "pass"
            if step["relation"] == "=":  # an inequality holds or not: it has no digits
                assert step["digits"] >= 30
        for model in derivation["models"]:
            sampled = [r for r in model["monte_carlo"] if r["status"] != "n/a"]
            for r in sampled:
                assert r["status"] == "pass" and r["ci_low"] <= r["estimate"] <= r["ci_high"]
            if derivation["name"] in INDEPENDENT_CLAIMS:
                assert [r["d"] for r in sampled] == [64, 512, 4096]
    summary = report["summary"]
    assert summary["derivations"] == len(report["derivations"]) and summary["failed"] == 0
    assert summary["refuted_as_expected"] == len(REFUTED_AT)
    assert "verified" in completed.stdout and "refuted as expected" in completed.stdout


def test_user_folder_with_a_wrong_step_fails_at_that_step(tmp_path, capsys):
    write(tmp_path, "good.py", GOOD)
    write(tmp_path, "too_big.py", WRONG_STEP)
    out_json = tmp_path / "r.json"
    code, output = run("verify", str(tmp_path), "--json", str(out_json), "--no-monte-carlo",
                       capsys=capsys)
    assert code == 1
    assert "too_big: step 1 (variance_scaling)" in output
    assert "too_big.py:9" in output
    assert "sides differ at d = 2" in output  # at d = 1, 1/d and 1/d² agree
    report = json.loads(out_json.read_text())
    by_name = {d["name"]: d for d in report["derivations"]}
    assert by_name["good"]["status"] == "verified"
    bad = by_name["too_big"]
    assert bad["status"] == "failed"
    assert bad["steps"][0]["symbolic"] == "fail" and bad["steps"][0]["numeric"] == "fail"
    assert bad["models"][0]["steps"][0]["numeric_check"]["counterexample"]["d"] == 2


BAD_INPUTS = {
    "syntax": ("def broken(:\n", "broken.py:1: syntax error"),
    "unknown rule": (GOOD.replace('"linearity"', '"linearty"'),
                     "step 1: unknown rule 'linearty'"),
    "undefined symbol": (GOOD.replace("Step(0,", "Step(undefined_name,"),
                         "NameError: name 'undefined_name' is not defined"),
    "not an equation": (GOOD.replace("claim=Eq(E(Sum(q[i] * k[i], (i, 1, d))), 0)",
                                     "claim=E(q[1])"), "the claim must be a relation Eq(lhs, rhs)"),
    "import error": ("import no_such_module_here\n" + GOOD, "ModuleNotFoundError"),
    "derivations kept in a list": (GOOD.replace("mean = Derivation(", "kept = [Derivation(")
                                   .rstrip() + "]\n", "exposes none at module level"),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_is_named_and_exits_2_while_others_still_run(kind, tmp_path, capsys):
    source, message = BAD_INPUTS[kind]
    write(tmp_path, "broken.py", source)
    write(tmp_path, "good.py", GOOD)
    out_json = tmp_path / "r.json"
    code, output = run("verify", str(tmp_path), "--no-monte-carlo", "--json", str(out_json),
                       capsys=capsys)
    assert code == 2
    assert message in output
    assert "broken.py" in output
    assert "Traceback" not in output
    report = json.loads(out_json.read_text())
    statuses = {Path(d["file"]).name: d["status"] for d in report["derivations"]}
    assert statuses["good.py"] == "verified"
    assert report["summary"]["errors"] == 1


def test_a_folder_runs_only_files_that_build_derivations(tmp_path, capsys):
    """Discovery reads syntax trees: a script in the folder is never run, a virtualenv is never
    searched, and a folder with no derivation file is bad input, not "0 of 0 verified"."""
    marker = tmp_path / "ran"
    write(tmp_path, "script.py", f"open({str(marker)!r}, 'w').write('ran')\n")
    (tmp_path / ".venv").mkdir()
    write(tmp_path / ".venv", "lib.py", GOOD + f"open({str(marker)!r}, 'w').write('ran')\n")
    code, output = run("verify", str(tmp_path), "--no-monte-carlo", capsys=capsys)
    assert code == 2 and "no derivation files" in output
    assert not marker.exists()


def test_unreadable_path_and_bad_flags(tmp_path, capsys):
    code, output = run("verify", str(tmp_path / "missing"), "--no-monte-carlo", capsys=capsys)
    assert code == 2 and "no such file or folder" in output
    for args in (["verify", "--digits", "many"], ["verify", "--model", "nonsense"],
                 ["verify", "--frobnicate"], ["nonsense"]):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code == 2
    assert "unknown model 'nonsense'" in capsys.readouterr().err


def test_no_half_written_json_when_the_report_cannot_be_written(tmp_path, capsys):
    write(tmp_path, "good.py", GOOD)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code = main(["verify", str(tmp_path / "good.py"), "--no-monte-carlo", "--json",
                 str(blocker / "r.json")])
    assert code == 2 and "cannot write" in capsys.readouterr().err
    assert blocker.read_text() == "not a folder"


def test_list(capsys):
    code, output = run("list", BUNDLED, capsys=capsys)
    assert code == 0 and "variance" in output and "mean_zero" in output
    code, output = run("list", "--models", capsys=capsys)
    assert code == 0 and "independent-laplace" in output and "aligned-uniform" in output


def test_list_rules_is_generated_from_the_rules_themselves(capsys):
    from sdpa_proofs.registry import RULES

    code, output = run("list", "--rules", capsys=capsys)
    assert code == 0
    for name, rule in RULES.items():
        assert f"{name}  {rule.fact}" in output, name


def test_what_if_under_another_model_names_the_breaking_step(capsys):
    code, output = run("verify", str(Path(BUNDLED) / "variance.py"), "--model",
                       "aligned-uniform", "--no-monte-carlo", capsys=capsys)
    assert code == 1
    assert "step 2 (cite(mean_zero))" in output and "cited mean_zero: its step 2 fails" in output
    assert "step 5 (independence)" in output and "dependent in this model" in output


def test_latex_output_compiles(tmp_path, capsys, pdflatex):
    code, output = run("latex", BUNDLED, "-o", str(tmp_path), capsys=capsys)
    assert code == 0
    files = sorted(tmp_path.glob("*.tex"))
    assert {f.stem for f in files} >= {"mean_zero", "variance", "over_shrink"}
    for tex in files:
        completed = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error",
                                    tex.name], cwd=tmp_path, capture_output=True, text=True)
        assert completed.returncode == 0, completed.stdout[-2000:]
        assert (tmp_path / f"{tex.stem}.pdf").stat().st_size > 1000
    variance = (tmp_path / "variance.tex").read_text()
    assert r"\sum_{i \neq j}" in variance and r"\mathbb{E}" in variance
    assert r"\operatorname{Var}" in variance and "mutually independent" in variance


def test_latex_reports_a_broken_file_and_writes_the_rest(tmp_path, capsys):
    source = tmp_path / "src"
    source.mkdir()
    write(source, "broken.py", "def broken(:\n")
    write(source, "good.py", GOOD)
    code, output = run("latex", str(source), "-o", str(tmp_path / "tex"), capsys=capsys)
    assert code == 2 and "broken.py:1: syntax error" in output
    assert [p.name for p in (tmp_path / "tex").iterdir()] == ["good.tex"]


def test_an_undefined_abbreviation_is_bad_input(tmp_path, capsys):
    """p_i without where=softmax_abbreviations: named, with the fix, not a traceback."""
    write(tmp_path, "bare.py", """
from sympy import Le, Sum
from sdpa_proofs import Derivation, Step, i, n, p

bare = Derivation(claim=Le(Sum(p[i] ** 2, (i, 1, n)), 1), models=["gaussian-logits"],
                  steps=[Step(Sum(p[i], (i, 1, n)), "at_most_max", rel="<=")])
""")
    assert main(["verify", str(tmp_path), "--no-monte-carlo"]) == 2
    out = capsys.readouterr().out
    assert "bare.py:5: claim: p_i is neither a coordinate" in out
    assert "where=softmax_abbreviations" in out


def test_a_derivation_imported_to_be_cited_is_checked_once(tmp_path, capsys):
    write(tmp_path, "good.py", GOOD)
    write(tmp_path, "citing.py", GOOD.replace("mean = Derivation(", "again = Derivation(")
          + "\nfrom good import mean\n")
    assert main(["verify", str(tmp_path), "--no-monte-carlo", "--json",
                 str(tmp_path / "r.json")]) == 0
    names = [d["name"] for d in json.loads((tmp_path / "r.json").read_text())["derivations"]]
    assert sorted(names) == ["citing", "good"]


@pytest.mark.slow
@pytest.mark.parametrize("args", [["list"], ["list", "--models"], ["scaling"], ["growth"],
                                  ["moment", "Var(S)"], ["verify", "--no-monte-carlo"],
                                  ["latex", "-o", "{tmp}"]],
                         ids=lambda a: " ".join(a))
def test_every_subcommand_runs_with_its_defaults(args, tmp_path):
    """As a new user types them, from the project's folder: exit 0 and no traceback (growth
    with no arguments once crashed after minutes on a model without q and k)."""
    command = [a.replace("{tmp}", str(tmp_path)) for a in args]
    completed = subprocess.run([sys.executable, "-m", "sdpa_proofs", *command], cwd=ROOT,
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "Traceback" not in completed.stderr


def test_a_report_shows_itself_in_a_notebook():
    """Jupyter's Markdown display: title, claim, status, and each step's three checks, one
    table row per step."""
    from sdpa_proofs.isolation import load_file
    from sdpa_proofs.runner import VerifySettings, verify_derivation

    (derivation,) = load_file(Path(BUNDLED) / "variance.py")
    report = verify_derivation(derivation, VerifySettings(monte_carlo=False,
                                                          models=["independent-normal"]))
    shown = report._repr_markdown_()
    assert repr(report) == "<DerivationReport variance: verified>"
    assert "**variance**: verified" in shown and "Var(S) = d·σ_q²·σ_k²" in shown
    rows = [line for line in shown.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + len(derivation.steps)  # the header and one row per step
    assert all(line.count("|") == 7 for line in rows)


def test_mutate_takes_a_model_and_a_budget(tmp_path, capsys, monkeypatch):
    """The mutants are checked under the model asked for, within the budget asked for."""
    import sdpa_proofs.mutation as mutation

    seen = []
    checked = mutation.verify_derivation

    def recording(derivation, settings):
        seen.append((tuple(settings.models), settings.budget, settings.monte_carlo))
        return checked(derivation, settings)

    monkeypatch.setattr(mutation, "verify_derivation", recording)
    code, output = run("mutate", str(ROOT / "derivations" / "mean_zero.py"), "--model",
                       "independent-rademacher", "--budget", "30", capsys=capsys)
    assert code == 0 and "kill rate 100.0%" in output
    assert seen and set(seen) == {(("independent-rademacher",), 30.0, False)}
    with pytest.raises(SystemExit) as bad:
        main(["mutate", "--budget", "-1"])
    assert bad.value.code == 2


@pytest.mark.parametrize("command", ["list", "verify", "mutate", "latex"])
def test_every_path_argument_has_help(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "derivation files or folders" in capsys.readouterr().out


def test_without_a_derivations_folder_the_installed_catalogue_is_the_default(tmp_path,
                                                                             monkeypatch, capsys):
    """The catalogue travels with the package (sdpa_proofs.catalogue, also in the wheel)."""
    monkeypatch.chdir(tmp_path)
    code, output = run("list", capsys=capsys)
    assert code == 0 and "mean_zero" in output and "entropy_floor" in output


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_the_readme_rule_table_lists_every_rule():
    from sdpa_proofs.registry import RULES

    table = readme_section("Writing a derivation")
    missing = [name for name in RULES if f"| `{name}` |" not in table]
    assert not missing, missing


def test_the_readme_synopsis_shows_every_option_of_every_subcommand():
    from sdpa_proofs.cli import parser

    synopsis = readme_section("Command line").split("```")[1]
    commands = parser()._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        line = synopsis[synopsis.index(f"sdpa-proofs {name}"):]
        line = line[:line.find("\nsdpa-proofs ", 1)]
        for action in sub._actions:
            flags = [o for o in action.option_strings if o not in ("-h", "--help")]
            assert not flags or any(flag in line for flag in flags), (name, flags)


def test_the_names_sympy_shadows_have_aliases_that_nothing_shadows():
    """E and S clash with SymPy's E and S after a star import; the aliases are the same objects."""
    namespace: dict = {}
    exec("from sdpa_proofs import *\nfrom sympy import *", namespace)
    import sympy

    from sdpa_proofs import E, Expectation, S, S_qk
    assert namespace["E"] is sympy.E and namespace["Expectation"] is E
    assert namespace["S"] is sympy.S and namespace["S_qk"] is S
    assert Expectation is E and S_qk is S


def test_the_json_report_has_a_schema_and_the_claim_as_latex_and_as_srepr(tmp_path, capsys):
    """The srepr reads back to the very claim that was checked; the LaTeX is the renderer's."""
    from sdpa_proofs import read_srepr
    from sdpa_proofs.isolation import load_file
    from sdpa_proofs.latex import to_latex
    from sdpa_proofs.report import JSON_SCHEMA

    files = [ROOT / "derivations" / "softmax" / "entropy_floor.py",
             ROOT / "derivations" / "variance.py", ROOT / "derivations" / "softmax" /
             "collision_limit.py"]
    report = tmp_path / "r.json"
    code, _ = run("verify", *map(str, files), "--no-monte-carlo", "--json", str(report),
                  capsys=capsys)
    data = json.loads(report.read_text())
    assert code == 0 and data["schema"] == JSON_SCHEMA
    for entry, path in zip(sorted(data["derivations"], key=lambda d: d["file"]),
                           sorted(files, key=lambda f: str(f.relative_to(ROOT)))):
        (derivation,) = load_file(path)
        assert read_srepr(entry["claim_srepr"]) == derivation.claim
        assert entry["claim_latex"] == to_latex(derivation.claim) and "\\" in entry["claim_latex"]
