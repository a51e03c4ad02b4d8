"""A claim is proved only where its divisions are by numbers other than 0: every output shows
the divisors its parameters' declarations do not keep from 0 as conditions (a != 2)."""

import json
from pathlib import Path

import sympy as sp
from sources import write
from sympy import Abs, Rational, Sum, Symbol, log, sin

from sdpa_proofs import E, d, i, q, sigma_q
from sdpa_proofs.cli import main
from sdpa_proofs.domains import nonzero_divisors
from sdpa_proofs.text import show

a, c = Symbol("a", positive=True), Symbol("c", integer=True, positive=True)
b = Symbol("b", real=True)
ROOT = Path(__file__).resolve().parent.parent


def shown(*exprs) -> list[str]:
    return [show(x) for x in nonzero_divisors(list(exprs))]


def test_each_admitted_root_of_a_divisor_is_a_condition():
    # a^2 - 4 = (a - 2)(a + 2): a > 0 admits the root 2 only, a real b both
    assert shown((a**2 - 4) / (a - 2)) == ["a ≠ 2"]
    assert shown(1 / (b**2 - 4)) == ["b ≠ -2", "b ≠ 2"]
    # c - 1/2 has its root where no integer is; log c is 0 at c = 1
    assert shown(1 / (2 * c - 1)) == [] and shown(1 / log(c)) == ["c ≠ 1"]
    assert shown(1 / (d - 5)) == ["d ≠ 5"] and shown(1 / Abs(b)) == ["b ≠ 0"]
    # b^(c - 3) is 1/b at c = 2; a^(c - 3) with a > 0 is a number for every c
    assert shown(b ** (c - 3)) == ["b ≠ 0"] and shown(a ** (c - 3), b ** (c + 3)) == []


def test_a_divisor_no_root_of_a_single_symbol_describes_stays_as_it_is():
    assert shown(1 / (a - b)) == ["a ≠ b"]
    assert shown(1 / (a * b - 1)) == ["a·b - 1 ≠ 0"]
    assert shown(1 / (a**5 - a - 1)) == ["a⁵ - a - 1 ≠ 0"]  # its root has no radical form
    assert shown(1 / sin(a)) == ["sin(a) ≠ 0"]  # 0 at a = k pi, infinitely many


def test_divisors_the_declarations_keep_from_0_or_that_are_not_parameters_put_none():
    assert shown(1 / (sigma_q**2 + 1), 1 / d, 1 / (a + 2), Rational(1, 3) * a) == []
    # moments (whose values the models give), bound indices, and coordinates whose division
    # a moment holds (an integral, not a point) are the checks' own business
    assert shown(1 / (E(q[1] ** 2) - 1), Sum(1 / (i - a), (i, 1, d)), E(1 / (q[1] - a))) == []


def test_a_pointwise_claim_is_proved_where_its_coordinates_divide_by_no_0():
    """(z_1^2 - a^2)/(z_1 - a) = z_1 + a has no value at z_1 = a (review round 92)."""
    z1, z2 = sp.Indexed(sp.IndexedBase("z", real=True), 1), sp.Indexed(
        sp.IndexedBase("z", real=True), 2)
    assert shown((z1**2 - a**2) / (z1 - a)) == ["z_1 ≠ a"]
    assert shown(1 / (z1 - z2), 1 / q[i]) == ["q_i ≠ 0", "z_1 ≠ z_2"]
    assert shown(1 / (z1**2 + 1)) == []


POLE = """from sympy import *
from sdpa_proofs import *

a = Symbol("a", positive=True)
pole = Derivation(title="pole", claim=Eq((a**2 - 4) / (a - 2) * E(q[1]**2), (a + 2) * sigma_q**2),
                  steps=[Step((a**2 - 4) / (a - 2) * sigma_q**2,
                              ["second_moment", "model_variance", "zero_mean"]),
                         Step((a + 2) * sigma_q**2, "algebra")])
"""

IN_A_STEP = """from sympy import *
from sdpa_proofs import *

b = Symbol("b", real=True)
mine = LatentLinearModel(name="mine", latents=(Latent("u", NORMAL),),
                         loadings={q: {"u": 1 / (b - 3)}})
step = Derivation(title="step", claim=Eq(b * E(q[1]), 0), models=[mine],
                  steps=[Step((b**2 + b) / (b + 1) * E(q[1]), "algebra"),
                         Step(0, "zero_mean")])
"""


def test_every_output_states_the_conditions_with_the_claim(tmp_path, capsys):
    from sdpa_proofs.isolation import load_paths
    from sdpa_proofs.latex import document

    write(tmp_path, "pole.py", POLE)
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    code = main(["verify", str(tmp_path), "--no-monte-carlo", "--json", str(report),
                 "--junit", str(junit)])
    out = capsys.readouterr().out
    (entry,) = json.loads(report.read_text())["derivations"]
    assert code == 0 and entry["status"] == "verified", out
    assert entry["conditions"] == ["a > 0", "a ≠ 2"]
    assert "a ≠ 2" in out  # the table may fold the claim
    assert "a &gt; 0, a ≠ 2" in junit.read_text(encoding="utf-8")
    (derivation,) = load_paths([str(tmp_path / "pole.py")])
    assert r"for $a > 0$, $a \neq 2$." in document(derivation)


def test_a_divisor_of_a_step_or_of_a_model_is_a_condition_of_the_claim(tmp_path, capsys):
    """The claim b E[q_1] = 0 has no divisor, but its proof divides by b + 1 and its model by
    b - 3: it is proved for the other b."""
    write(tmp_path, "step.py", IN_A_STEP)
    report = tmp_path / "report.json"
    code = main(["verify", str(tmp_path), "--no-monte-carlo", "--json", str(report)])
    (entry,) = json.loads(report.read_text())["derivations"]
    assert code == 0 and entry["status"] == "verified", capsys.readouterr().out
    assert entry["conditions"] == ["b ≠ -1", "b ≠ 3"]


def test_the_bundled_catalogue_divides_by_0_only_where_p_star_is_1():
    """The seed's claims hold for every d, sigma_q, sigma_k the models admit; the scale
    log(n p / (1 - p)) / Delta that fixes the probability p of the key ahead has no value at
    p = 1, where no finite scale gives that key all the weight."""
    from sdpa_proofs.isolation import load_paths
    from sdpa_proofs.models import resolve_models
    from sdpa_proofs.validation import claim_conditions

    found = {}
    for derivation in load_paths([str(ROOT / "derivations")]):
        declared = claim_conditions(derivation, resolve_models(derivation.models))
        found |= {derivation.name: [show(x) for x in declared if isinstance(x, sp.Ne)]}
    assert {name: said for name, said in found.items() if said} == {
        "margin_for_fixed_probability": ["pstar ≠ 1"]}


MOMENT_DIVISORS = """from sympy import *
from sdpa_proofs import *

a = Symbol("a", real=True)
copy = LatentLinearModel(name="scaled-copy", latents=(Latent("u", NORMAL),),
                         loadings={q: {"u": a}, k: {"u": 1}})
corr = Derivation(title="corr", claim=Eq(Cov(q[1], k[1])**2 / (Var(q[1]) * Var(k[1])), 1),
                  models=[copy], steps=[Step(1, "model_moment")])
x = E(q[1]**2) - 1
shifted = Derivation(title="shifted", claim=Eq((x**2 + x) / x, E(q[1]**2)),
                     models=["independent-normal", copy],
                     steps=[Step(x + 1, "algebra"), Step(E(q[1]**2), "algebra")])
"""


def test_a_moment_that_divides_is_not_0_where_the_claim_holds(tmp_path, capsys):
    """Var(q_1) is a^2 where q_1 = a u, and E[q_1^2] - 1 is sigma_q^2 - 1 under
    independent-normal and a^2 - 1 under scaled-copy: the claims were verified for every a
    (review round 92); they hold where those are not 0."""
    from sdpa_proofs.isolation import load_paths
    from sdpa_proofs.latex import document
    from sdpa_proofs.runner import VerifySettings, verify_derivation

    write(tmp_path, "moments.py", MOMENT_DIVISORS)
    report = tmp_path / "report.json"
    code = main(["verify", str(tmp_path), "--no-monte-carlo", "--json", str(report)])
    entries = {e["name"]: e for e in json.loads(report.read_text())["derivations"]}
    assert code == 0, capsys.readouterr().out
    assert {name: e["status"] for name, e in entries.items()} == {
        "moments.corr": "verified", "moments.shifted": "verified"}
    assert entries["moments.corr"]["conditions"] == ["a ≠ 0"]
    assert entries["moments.shifted"]["conditions"] == ["σ_q ≠ 1", "a ≠ -1", "a ≠ 1"]
    corr = next(x for x in load_paths([str(tmp_path / "moments.py")]) if x.name.endswith("corr"))
    checked = verify_derivation(corr, VerifySettings(monte_carlo=False))
    assert r"for $a \neq 0$." in document(corr, checked)


def test_a_path_that_reads_like_a_label_hides_no_condition(tmp_path, capsys):
    """The conditions were gathered by the labels of the places, which begin with the file's
    path: in a folder named 'x: distinct' the claim's divisor a - 2 was dropped (review round
    92)."""
    folder = tmp_path / "x: distinct"
    folder.mkdir()
    write(folder, "pole.py", POLE)
    report = tmp_path / "report.json"
    main(["verify", str(folder), "--no-monte-carlo", "--json", str(report)])
    (entry,) = json.loads(report.read_text())["derivations"]
    assert entry["conditions"] == ["a > 0", "a ≠ 2"], capsys.readouterr().out
