"""Hostile input, round two: false claims with built-in rules only, and outputs (terminal, JSON,
JUnit, LaTeX, files) that a contributor's derivation must not be able to break or turn against
the machine that builds them."""

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from sources import GOOD, write

from sdpa_proofs.cli import main

HEADER = "from sympy import *\nfrom sdpa_proofs import *\n"


def verify(tmp_path, *args, capsys):
    report = tmp_path / "report.json"
    code = main(["verify", str(tmp_path), "--no-monte-carlo", "--json", str(report), *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err, json.loads(report.read_text())


def statuses(data) -> dict:
    return {d["name"]: d["status"] for d in data["derivations"]}


# ---- false claims with built-in rules ------------------------------------------------------

@pytest.mark.parametrize("coordinate", ["q[j + 3]", "q[ceiling(j / 2)]", "q[d + 1]", "q[0]"])
def test_index_arithmetic_is_bad_input(coordinate, tmp_path, capsys):
    write(tmp_path, "shifted.py", HEADER + f'''
shifted = Derivation(claim=Eq(E(q[i] * {coordinate}), 0), models=["independent-normal"],
                     steps=[Step(E(q[i]) * E({coordinate}), "independence"),
                            Step(0, "zero_mean")])
''')
    code, output, _ = verify(tmp_path, capsys=capsys)
    assert code == 2
    assert "arithmetic on indices is not supported" in output or "from 1" in output


def test_digits_cannot_hide_under_terms_that_cancel(tmp_path, capsys):
    """E[q_j^2] + E[10^60 k_j^2] - 10^60 sigma_k^2 is sigma_q^2, not sigma_q^2 + 1."""
    write(tmp_path, "masked.py", HEADER + '''
big = Integer(10)**60
masked = Derivation(
    claim=Eq(E(q[j]**2) + E(big * k[j]**2) - big * sigma_k**2, sigma_q**2 + 1),
    models=["independent-normal"],
    steps=[Step(sigma_q**2 + 1, "algebra")])
''')
    code, output, data = verify(tmp_path, capsys=capsys)
    step = data["derivations"][0]["models"][0]["steps"][0]
    assert code == 1 and step["numeric_check"]["status"] == "fail"


def test_a_cited_fact_for_distinct_indices_is_not_used_on_the_diagonal(tmp_path, capsys):
    write(tmp_path, "_off_diagonal.py", HEADER + '''
off_diagonal = Derivation(claim=Eq(E(q[i] * q[j]), 0), distinct=[(i, j)],
                          models=["independent-normal"],
                          steps=[Step(E(q[i]) * E(q[j]), "independence"),
                                 Step(0, "zero_mean")])
''')
    write(tmp_path, "diagonal.py", HEADER + '''
from _off_diagonal import off_diagonal
double = Sum(Sum(E(q[i] * q[j]), (j, 1, d)), (i, 1, d))
diagonal = Derivation(claim=Eq(double, 0), models=["independent-normal"],
                      steps=[Step(Sum(Sum(0, (j, 1, d)), (i, 1, d)), cite(off_diagonal)),
                             Step(0, "count_terms")])
''')
    code, output, data = verify(tmp_path, capsys=capsys)
    assert statuses(data)["diagonal"] == "failed"
    assert "holds for i ≠ j only" in output or "j ≠ i only" in output


def test_sum_limits_must_be_integers(tmp_path, capsys):
    write(tmp_path, "half.py", HEADER + '''
half = Derivation(claim=Eq(z[1] * Sum(1, (i, 1, n / 2)), z[1] * n / 2),
                  models=["gaussian-logits"], steps=[Step(z[1] * n / 2, "count_terms")])
''')
    code, output, _ = verify(tmp_path, capsys=capsys)
    assert code == 2 and "not known to be an integer" in output


def test_monte_carlo_samples_a_claim_written_the_other_way_round():
    from sympy import Eq, Sum

    from sdpa_proofs import E, d, get_model, i, k, q
    from sdpa_proofs.montecarlo import check_claim

    results = check_claim(Eq(0, E(Sum(q[i] * k[i], (i, 1, d))), evaluate=False),
                          get_model("independent-normal"), dims=(64,))
    assert results and results[0].status == "pass" and results[0].samples > 0


def test_kronecker_deltas_of_free_indices_in_a_true_claim(tmp_path, capsys):
    """E[q_i q_j] = sigma_q^2 delta_ij holds in both cases, i = j and i != j."""
    from sympy import KroneckerDelta

    from sdpa_proofs import E, get_model, i, j, q, sigma_q
    from sdpa_proofs.exactcheck import exact_check

    model = get_model("independent-normal")
    assert exact_check(E(q[i] * q[j]), sigma_q**2 * KroneckerDelta(i, j), model).passed
    wrong = exact_check(E(q[i] * q[j]), 2 * sigma_q**2 * KroneckerDelta(i, j), model)
    assert wrong.status == "fail" and "i = j" in wrong.reason


def test_a_wrong_step_towards_a_true_claim_says_the_claim_held(tmp_path, capsys):
    write(tmp_path, "held.py", HEADER + '''
held = Derivation(claim=Eq(E(Sum(q[i] * k[i], (i, 1, d))), 0), models=["independent-normal"],
                  steps=[Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity"),
                         Step(Sum(E(q[i]) * E(k[i]) + 1, (i, 1, d)), "independence"),
                         Step(0, "zero_mean")],
                  expect_refuted_at=2)
''')
    report = tmp_path / "r.json"
    code = main(["verify", str(tmp_path), "--json", str(report)])
    output = capsys.readouterr().out
    (entry,) = json.loads(report.read_text())["derivations"]
    assert code == 0 and entry["status"] == "refuted"
    assert entry["claim_held_in_monte_carlo"] is True
    assert "the claim itself held" in output


@pytest.mark.slow
def test_a_runaway_expression_ends_within_its_budget_and_memory(tmp_path, capsys):
    import time

    write(tmp_path, "huge.py", HEADER + '''
huge = Derivation(claim=Eq(E(q[1]) * (d + 1)**200000, 0), models=["independent-normal"],
                  steps=[Step(0 * (d + 1), "zero_mean")])
''')
    started = time.monotonic()
    code, output, data = verify(tmp_path, "--budget", "5", "--memory", "4", capsys=capsys)
    assert time.monotonic() - started < 240
    # SymPy may take long already to build the claim (loading budget) or in a check (budget)
    assert "verified" not in statuses(data).values() and code != 0


# ---- outputs --------------------------------------------------------------------------------

HOSTILE_TEX = HEADER + '''
evil = Symbol(r"\\input{/etc/hostname}")
model = LatentLinearModel(
    name="mine", title=r"mine $\\immediate\\openout1=pwned.tex$", dimension=d,
    parameter_points=[{sigma_q: Rational(1, 2)}],
    latents=(Latent("u", NORMAL),), loadings={q: {"u": sigma_q}},
    description=(r"$\\text{\\input{/etc/hostname}}$ and ^^5cinput", ))
hostile = Derivation(
    title=r"$\\text{\\input{/etc/hostname}}$ costs $5 & 100% of # ~",
    claim=Eq(Var(q[1]) + 0 * evil, sigma_q**2), models=[model],
    steps=[Step(sigma_q**2, ["model_variance", "algebra"],
                r"it costs $5; $\\csname input\\endcsname{/etc/hostname}$")])
'''


def test_latex_from_a_hostile_derivation_reads_and_writes_nothing(tmp_path, capsys):
    source = tmp_path / "src"
    source.mkdir()
    write(source, "hostile.py", HOSTILE_TEX)
    out = tmp_path / "tex"
    assert main(["latex", str(source), "-o", str(out)]) == 0
    tex = (out / "hostile.tex").read_text()
    inert = tex.replace(r"\textbackslash{}", "<backslash>")  # escaped: printed, not run
    for forbidden in (r"\input", r"\openout", r"\csname", "^^5c"):
        assert forbidden not in inert, forbidden
    assert r"\$5" in tex
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed (.ci/run installs it)")
    compiled = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                               "hostile.tex"], cwd=out, capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stdout[-2000:]
    assert not (out / "pwned.tex").exists()
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else ""
    if hostname and shutil.which("pdftotext"):
        words = subprocess.run(["pdftotext", "hostile.pdf", "-"], cwd=out, capture_output=True,
                               text=True).stdout
        assert hostname not in words


def test_output_names_stay_inside_the_folder_and_never_collide(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder, "variance.py", GOOD)
    write(tmp_path / "a", "escape.py", GOOD.replace("models=", 'name="../../escaped", models='))
    write(tmp_path / "a", "absolute.py", GOOD.replace("models=", 'name="/tmp/absolute", models='))
    out = tmp_path / "out"
    assert main(["latex", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(out)]) == 0
    written = sorted(p.name for p in out.iterdir())
    assert len(written) == 4 and all(p.parent == out for p in out.iterdir())
    assert "variance.tex" in written and "variance-2.tex" in written
    assert not (tmp_path / "escaped.tex").exists() and not Path("/tmp/absolute.tex").exists()
    assert (out / "variance.tex").stat().st_mode & 0o044  # readable as umask 022 makes it


NAMES = {"control": "evil\\x07\\x1b[2J\\rALL VERIFIED", "markup": "[/bold][red]x",
         "surrogate": "lone\\udc80", "bidi": "a\\u202eb"}


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_reports_stay_valid_and_inert_whatever_the_names(kind, tmp_path, capsys):
    write(tmp_path, "named.py", GOOD.replace("models=", f'name="{NAMES[kind]}", '
                                                       f'title="{NAMES[kind]}", models='))
    junit, report = tmp_path / "r.xml", tmp_path / "r.json"
    code = main(["verify", str(tmp_path), "--no-monte-carlo", "--junit", str(junit),
                 "--json", str(report)])
    output = capsys.readouterr()
    assert code == 0
    ET.parse(junit)  # valid XML
    data = json.loads(report.read_text())
    assert data["derivations"][0]["status"] == "verified"
    for text in (output.out, output.err, report.read_text(), junit.read_text()):
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text
        assert "\u202e" not in text


def test_an_infinite_estimate_still_gives_valid_reports(tmp_path):
    from sdpa_proofs.report import (
        DerivationReport,
        ModelReport,
        RunReport,
        StepReport,
        write_json,
    )
    from sdpa_proofs.verdicts import MonteCarloResult, Verdict

    step = StepReport(1, "algebra", "x", "", "f.py:1", Verdict("pass", digits=float("inf")),
                      Verdict("pass"), Verdict("pass", digits=float("inf")))
    model = ModelReport("m", [step], monte_carlo=[MonteCarloResult(
        64, 10, float("inf"), float("-inf"), float("inf"), float("nan"), "fail", "overflow")])
    run = RunReport([DerivationReport("d", "f.py", models=[model])])
    write_json(run, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["derivations"][0]["models"][0]["monte_carlo"][0]["estimate"] is None


@pytest.mark.parametrize("title", [r"$\left( x$", r"$\frac$ and $x^$ and $\sqrt$", r"$x^2^3$",
                                   r"$\text{x^2}$", "σ, ι0 and ∑ in prose"])
def test_user_math_that_would_not_compile_is_printed_instead(title, tmp_path, capsys, pdflatex):
    from sympy import Eq, Symbol, sqrt

    from sdpa_proofs import SD, Derivation, Step, Var, q, sigma_q
    from sdpa_proofs.latex import document

    odd = Symbol("ι0")
    derivation = Derivation(claim=Eq(SD(q[1]) + 0 * odd, sigma_q), title=title,
                            steps=[Step(sqrt(Var(q[1])), "sd_definition", title),
                                   Step(sigma_q, ["model_variance", "algebra"], "")],
                            models=["independent-normal"])
    (tmp_path / "odd.tex").write_text(document(derivation))
    compiled = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error",
                               "odd.tex"], cwd=tmp_path, capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stdout[-1500:]


# ---- review round 59: one file's expressions reaching another's checker ------------------

def test_a_files_model_data_does_not_reach_another_files_checker(tmp_path):
    """The parent once built every file's models from their sealed data before forking the
    checkers, and SymPy's cache, which they inherit, handed file A's q_j k_j (j declared
    rational as well, the same facts) to file B's equal expression, whose index then failed
    validation.  B verifies as it does alone, Monte Carlo on."""
    from sdpa_proofs.isolation import verify_paths
    from sdpa_proofs.runner import VerifySettings

    (tmp_path / "a_model.py").write_text(HEADER + (
        "J = Symbol('j', integer=True, positive=True, rational=True)\n"
        "model = LatentLinearModel(name='a-model', title='a', dimension=d,\n"
        "    parameter_points=[{sigma_q: Rational(1, 2)}], latents=(Latent('u', NORMAL),),\n"
        "    loadings={q: {'u': sigma_q + E(q[J] * k[J])}}, description=('a',))\n"
        "derivation = Derivation(title='A', claim=Eq(E(q[1]), 0), models=[model],\n"
        "    steps=[Step(0, 'zero_mean', '')])\n"))
    (tmp_path / "b_valid.py").write_text(HEADER + (
        "derivation = Derivation(title='B', claim=Eq(E(q[j] * k[j]), 0), steps=[\n"
        "    Step(E(q[j]) * E(k[j]), 'independence', ''), Step(0, 'zero_mean', '')])\n"))
    settings = VerifySettings(jobs=1, monte_carlo_dimensions=(16,))
    together = {r.name: r.status for r in verify_paths([str(tmp_path)], settings).derivations}
    alone = verify_paths([str(tmp_path / "b_valid.py")], settings).derivations[0].status
    assert together["b_valid"] == alone == "verified"


def test_sealed_data_sympy_cannot_build_is_the_files_error_alone(tmp_path, capsys):
    """An entry with no index, built past SymPy's own check, was sealed, and rebuilding it in
    the checker raised an internal error for every derivation of the file (round 59)."""
    (tmp_path / "bare.py").write_text(HEADER + (
        "bare = Expr.__new__(Indexed, q)\n"
        "derivation = Derivation(title='bare', claim=Eq(E(bare), 0),\n"
        "    steps=[Step(0, 'zero_mean', '')])\n"
        "ok = Derivation(title='neighbour', claim=Eq(E(q[1]), 0),\n"
        "    steps=[Step(0, 'zero_mean', '')])\n"))
    code, out, data = verify(tmp_path, capsys=capsys)
    assert code != 0 and statuses(data) == {"bare.derivation": "error", "bare.ok": "verified"}
    (error,) = [d["error"] for d in data["derivations"] if d["status"] == "error"]
    assert "bare.py" in error and "Indexed" in error


# ---- review round 60: a loader's tampered payload reaching the parent or the samplers -----

TAMPERED = {  # each file rewrites what its own loader sends (it runs there)
    "nested_in_the_sampler": "import sdpa_proofs.isolation as iso\n_seal = iso.seal\n"
    "def seal(derivation):\n    item, one = _seal(derivation), ['Integer', '1']\n"
    "    for _ in range(700):\n        one = ['Add', ['Integer', '0'], one]\n"
    "    item['claim'] = [item['claim'][0], ['Mul', item['claim'][1], one], item['claim'][2]]\n"
    "    return item\niso.seal = seal\n",
    "nested_past_the_parser": "import sys\nsys.setrecursionlimit(100000)\n"
    "import sdpa_proofs.isolation as iso\n_seal = iso.seal\n"
    "def seal(derivation):\n    item, one = _seal(derivation), ['Integer', '1']\n"
    "    for _ in range(3000):\n        one = ['Add', ['Integer', '0'], one]\n"
    "    item['claim'] = [item['claim'][0], ['Mul', item['claim'][1], one], item['claim'][2]]\n"
    "    return item\niso.seal = seal\n",
    "a_model_that_is_a_number": "import sdpa_proofs.isolation as iso\n_seal = iso.seal\n"
    "def seal(derivation):\n    item = _seal(derivation)\n    item['models'] = [5]\n"
    "    return item\niso.seal = seal\n",
    "models_that_are_a_number": "import json as _json, types\n"
    "import sdpa_proofs.isolation as iso\ndef dumps(obj, **kw):\n"
    "    for item in obj.get('derivations', []):\n        item['models'] = 5\n"
    "    return _json.dumps(obj, **kw)\n"
    "iso.json = types.SimpleNamespace(dumps=dumps, loads=_json.loads)\n",
}


@pytest.mark.parametrize("tampering", TAMPERED, ids=str)
def test_a_tampered_payload_is_its_files_error_and_no_one_elses(tampering, tmp_path):
    """Deep nesting past Python's recursion limit (in the parser, or in the sampler that
    rebuilt every file's claims) and models of the wrong shape crashed the parent or left other
    files' Monte Carlo undecided; now the file that sent them is bad input, the others
    verified."""
    from sdpa_proofs.isolation import verify_paths
    from sdpa_proofs.runner import VerifySettings

    (tmp_path / "a_tampered.py").write_text(HEADER + TAMPERED[tampering] + (
        "derivation = Derivation(title='A', claim=Eq(E(q[1]), 0), "
        "steps=[Step(0, 'zero_mean', '')])\n"))
    (tmp_path / "b_plain.py").write_text(GOOD)
    settings = VerifySettings(jobs=1, monte_carlo_dimensions=(16,))
    run = verify_paths([str(tmp_path)], settings)
    status = {Path(r.file).name: r.status for r in run.derivations}
    assert status == {"a_tampered.py": "error", "b_plain.py": "verified"}
    (good,) = [r for r in run.derivations if r.status == "verified"]
    assert {m.status for model in good.models for m in model.monte_carlo} == {"pass"}


def test_the_report_leaves_out_what_does_not_rebuild(tmp_path, capsys):
    """``report`` rebuilds each checked derivation in the parent; one that its checker found
    bad input crashed it (round 60).  It is left out, named, and the others are written."""
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "bare.py").write_text(HEADER + (
        "derivation = Derivation(title='bare', claim=Eq(E(Expr.__new__(Indexed, q)), 0),\n"
        "    steps=[Step(0, 'zero_mean', '')])\n"))
    (folder / "good.py").write_text(GOOD)
    main(["report", "--no-monte-carlo", "-o", str(tmp_path / "out"), str(folder)])
    out = capsys.readouterr()
    assert "bare.py" in out.out + out.err
    written = (tmp_path / "out" / "report-en.tex").read_text()
    assert "good" in written


JACOBIAN_AT = '''
from _jacobian import derivation as jacobian
trace = Sum(Derivative(p[i], z[i]), (i, 1, n))
traced = Derivation(claim=Eq(trace, 1 - Sum(p[i]**2, (i, 1, n))), where=softmax_abbreviations,
                    models=["gaussian-logits"],
                    steps=[Step(Sum(p[i] * ({}), (i, 1, n)), cite(jacobian)),
                           Step(1 - Sum(p[i]**2, (i, 1, n)), "algebra")])
'''


@pytest.mark.parametrize("factor, verified", [("1 - p[i]", True), ("1 + p[i]", False)])
def test_a_cited_equation_applies_at_coinciding_free_indices(tmp_path, capsys, factor,
                                                             verified):
    """The Jacobian's claim dp_i/dz_j = p_i (delta_ij - p_j) holds for every i, j: cited, it
    rewrites dp_i/dz_i to p_i (1 - p_i), as a lemma does; a wrong instance is refused at the
    step that cites it (a new user's review)."""
    root = Path(__file__).resolve().parent.parent
    shutil.copy(root / "derivations" / "softmax" / "jacobian.py", tmp_path / "_jacobian.py")
    write(tmp_path, "traced.py", HEADER + JACOBIAN_AT.replace("{}", factor))
    code, output, data = verify(tmp_path, capsys=capsys)
    traced = next(d for d in data["derivations"] if d["name"] == "traced")
    if verified:
        assert code == 0 and traced["status"] == "verified", output
    else:
        assert code == 1 and traced["status"] == "failed"
        assert traced["models"][0]["steps"][0]["rule_check"]["status"] == "fail"


BOUND_LIKE_FREE = '''
cited = Derivation(claim=Eq(E(q[i]**2), sigma_q**2 * Sum(KroneckerDelta(i, j), (i, 1, d))),
                   models=["independent-normal"],
                   steps=[Step(sigma_q**2, "model_moment"),
                          Step(sigma_q**2 * Sum(KroneckerDelta(i, j), (i, 1, d)), "sift")])
'''


@pytest.mark.parametrize("citing", [
    # false: E[q_j^2] is sigma_q^2; renamed with its bound i, the cited sum became sum_j 1
    "Derivation(claim=Eq(E(q[j]**2), d * sigma_q**2), models=['independent-normal'], "
    "steps=[Step(sigma_q**2 * Sum(1, (j, 1, d)), cite(cited)), "
    "Step(d * sigma_q**2, 'count_terms')])",
    # true, but at i = 2 the renamed sum ran over the integer 2: an internal error
    "Derivation(claim=Eq(E(q[2]**2), sigma_q**2 * Sum(KroneckerDelta(m, j), (m, 1, d))), "
    "models=['independent-normal'], "
    "steps=[Step(sigma_q**2 * Sum(KroneckerDelta(m, j), (m, 1, d)), cite(cited))])",
])
def test_a_cited_instance_keeps_the_cited_sum_over_its_own_index(tmp_path, capsys, citing):
    """E[q_i^2] = sigma_q^2 sum_i delta_ij binds i on the right and has it free on the left:
    its instance at i = j (or i = 2) renamed the bound i too (review round 76)."""
    write(tmp_path, "_bound.py", HEADER + BOUND_LIKE_FREE)
    write(tmp_path, "citing.py", HEADER + "from _bound import cited\nciting = " + citing + "\n")
    code, output, data = verify(tmp_path, capsys=capsys)
    citing_report = next(d for d in data["derivations"] if d["name"] == "citing")
    step = citing_report["models"][0]["steps"][0]
    assert "internal" not in output
    if "Sum(1, (j, 1, d))" in citing:  # the false one: refused where it cites
        assert step["rule_check"]["status"] == "fail"
    else:  # the true one: the citation rewrites; the exact engine cannot evaluate the delta
        assert step["rule_check"]["status"] == "pass"


def test_a_cited_claim_applies_where_the_citing_sum_names_its_bound_index(tmp_path, capsys):
    """d/dz_i sum_m e^(z_m) = e^(z_i), cited under a sum over m: the value m of i is named like
    the cited claim's bound index, which is renamed apart instead of the instance refused."""
    write(tmp_path, "_normaliser.py", HEADER + '''
cited = Derivation(claim=Eq(Derivative(Sum(exp(z[m]), (m, 1, n)), z[i]), exp(z[i])),
                   models=["gaussian-logits"],
                   steps=[Step(Sum(exp(z[m]) * KroneckerDelta(i, m), (m, 1, n)), "differentiate"),
                          Step(exp(z[i]), "sift")])
''')
    write(tmp_path, "citing_m.py", HEADER + '''
from _normaliser import cited
ell = Symbol("l", integer=True, positive=True)
citing_m = Derivation(claim=Eq(Sum(Derivative(Sum(exp(z[ell]), (ell, 1, n)), z[m]), (m, 1, n)),
                               Sum(exp(z[m]), (m, 1, n))),
                      models=["gaussian-logits"],
                      steps=[Step(Sum(exp(z[m]), (m, 1, n)), cite(cited))])
''')
    code, output, data = verify(tmp_path, capsys=capsys)
    assert code == 0 and {d["name"]: d["status"] for d in data["derivations"]}["citing_m"] == \
        "verified", output
