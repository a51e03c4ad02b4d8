"""The published report: one document from the checked derivations, in English and Chinese,
with the same formulas in both; it compiles (pdflatex, xelatex with ctex) and names every
derivation.  Without TeX the compile tests are skipped, saying why; CI installs TeX."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sdpa_proofs.cli import main
from sdpa_proofs.publish import COMPILERS, CompileError, compile_pdf
from sdpa_proofs.registry import RULES
from sdpa_proofs.translations import ZH, translate

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "derivations" / "variance.py",
         ROOT / "derivations" / "seed_audit" / "variance_is_second_moment.py",
         ROOT / "derivations" / "softmax" / "entropy_floor.py"]
NAMES = ["variance", "variance_is_second_moment", "entropy_floor"]


def needs(lang: str):
    compiler = COMPILERS[lang]
    return pytest.mark.skipif(shutil.which(compiler) is None or shutil.which("pdftotext") is None,
                              reason=f"{compiler} or pdftotext is not installed "
                                     "(.ci/install-tex installs them; CI runs these tests)")


def report(tmp_path, *extra, files=FILES, capsys=None):
    code = main(["report", *map(str, files), "-o", str(tmp_path), "--no-monte-carlo", *extra])
    return code, capsys.readouterr() if capsys else None


def math_of(tex: str) -> list[str]:
    return re.findall(r"\\begin\{align\*\}.*?\\end\{align\*\}", tex, re.S)


def test_both_editions_hold_the_same_formulas_and_their_own_words(tmp_path, capsys):
    code, _ = report(tmp_path, "--lang", "en", "--lang", "zh", capsys=capsys)
    assert code == 0
    english = (tmp_path / "report-en.tex").read_text()
    chinese = (tmp_path / "report-zh.tex").read_text()
    assert math_of(english) == math_of(chinese) and len(math_of(english)) == len(FILES)
    assert r"\documentclass[11pt]{ctexart}" in chinese and "证明" in chinese
    assert "Proof." in english and "证明" not in english
    for name in NAMES:
        assert name.replace("_", r"\_") in english and name.replace("_", r"\_") in chinese
    # sections in the order of the parts: the independent case, then the seed audit, softmax
    assert english.index("The independent case") < english.index("audit of the seed") < \
        english.index("Softmax")
    assert "refuted, as expected" in english and "verified, assuming" in english


def test_every_rule_and_every_bundled_model_speaks_chinese():
    from sdpa_proofs.models import MODELS

    missing = [name for name, rule in RULES.items()
               if not rule.latex.startswith("$") and rule.latex not in ZH]
    assert not missing, missing
    assert not [m.title for m in MODELS.values() if translate(m.title, "zh") == m.title]
    from sdpa_proofs.translations import assumptions_in

    assert not [name for name, m in MODELS.items()
                if assumptions_in(m, "zh") == m.assumptions()]
    # the mathematics in them is the English sentences': no symbol of its own
    for model in MODELS.values():
        english, chinese = ({token for formula in re.findall(r"\$([^$]+)\$", " ".join(sentences))
                             for token in re.findall(r"\\?[A-Za-z]+", formula)}
                            for sentences in (model.assumptions(), assumptions_in(model, "zh")))
        assert chinese <= english | {"d"}, (model.name, chinese - english)


@needs("en")
def test_the_english_report_compiles_and_names_every_derivation(tmp_path, capsys):
    code, _ = report(tmp_path, "--pdf", capsys=capsys)
    assert code == 0
    assert_compiled(tmp_path / "report-en.pdf")


@needs("zh")
def test_the_chinese_report_compiles_and_names_every_derivation(tmp_path, capsys):
    code, _ = report(tmp_path, "--lang", "zh", "--pdf", capsys=capsys)
    assert code == 0
    words = assert_compiled(tmp_path / "report-zh.pdf")
    assert "证明" in words and "已验证" in words


def assert_compiled(pdf: Path, names=NAMES) -> str:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    assert int(re.search(r"Pages:\s+(\d+)", info).group(1)) > 0
    log = pdf.with_suffix(".log").read_text(errors="replace")
    assert not [line for line in log.splitlines() if line.startswith("!")]
    words = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True,
                           text=True).stdout
    for name in names:
        assert name in words, name
    return words


def test_a_missing_compiler_is_said_plainly(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _: None)
    tex = tmp_path / "report-zh.tex"
    tex.write_text("x")
    with pytest.raises(CompileError, match="xelatex is not installed.*install-tex"):
        compile_pdf(tex, "zh")


@needs("en")
def test_a_compiler_error_is_reported_with_its_own_words(tmp_path):
    tex = tmp_path / "broken.tex"
    tex.write_text(r"\documentclass{article}\begin{document}\undefinedmacro\end{document}")
    with pytest.raises(CompileError, match="Undefined control sequence"):
        compile_pdf(tex, "en")


@pytest.mark.slow
@needs("en")
@needs("zh")
def test_the_bundled_report_compiles_in_both_languages(tmp_path, capsys):
    """The whole catalogue, Monte Carlo included, in English and Chinese."""
    code = main(["report", str(ROOT / "derivations"), "-o", str(tmp_path), "--lang", "en",
                 "--lang", "zh", "--pdf"])
    capsys.readouterr()
    assert code == 0
    from sdpa_proofs.isolation import load_paths

    names = [d.name for d in load_paths([str(ROOT / "derivations")])]
    for lang in ("en", "zh"):
        assert_compiled(tmp_path / f"report-{lang}.pdf", names)


@pytest.mark.parametrize("name", ["rules.md", "models.md"])
def test_the_references_in_docs_are_the_ones_the_code_writes(name):
    """docs/rules.md and docs/models.md come from the rules and models themselves; regenerate
    with `python -m sdpa_proofs.references docs` after changing either."""
    from sdpa_proofs.models import MODELS
    from sdpa_proofs.references import REFERENCES

    written = (ROOT / "docs" / name).read_text(encoding="utf-8")
    assert written == REFERENCES[name]() + "\n"
    every = RULES if name == "rules.md" else MODELS
    assert all(f"## `{key}`" in written for key in every)


HOSTILE = {  # file name -> derivation source, each a way round 20 broke or misled the report
    "twins.py": '''
true = Derivation(name="twin", claim=Eq(E(S), 0), where={S: dot_product},
                  steps=[Step(0, ["linearity", "independence", "zero_mean", "count_terms"])])
false = Derivation(name="twin", claim=Eq(E(S), 1), where={S: dot_product},
                   steps=[Step(1, ["linearity", "independence", "zero_mean", "count_terms"])])
''',
    "headings.py": '''
a = Derivation(title="$x$ 100% done #1 {", claim=Eq(E(S), 0), where={S: dot_product},
               steps=[Step(0, ["linearity", "independence", "zero_mean", "count_terms"])])
b = Derivation(title="$x$}}INJECTED TEXT%", claim=Eq(E(S), 0), where={S: dot_product},
               steps=[Step(0, ["linearity", "independence", "zero_mean", "count_terms"],
                           "$x\\\\limits$ and $x^2'$ and $" + "{" * 300 + "}" * 300 + "$")])
c = Derivation(title="two\\n\\nlines" + "x" * 3000, claim=Eq(E(S), 0), where={S: dot_product},
               steps=[Step(0, ["linearity", "independence", "zero_mean", "count_terms"],
                           "x ∉ S; u ≰ v; ∄ x; ∑ " + "y" * 250000)])
''',
    "names.py": '''
xscr = Symbol("xscr", positive=True)
frac = Function("frac")
d1 = Derivation(claim=Eq(E(S) * xscr + frac(xscr) - frac(xscr), 0), where={S: dot_product},
                steps=[Step(0, ["linearity", "independence", "zero_mean", "count_terms",
                                "algebra"])])
''',
}


@needs("en")
@needs("zh")
def test_nothing_a_derivation_says_breaks_the_report_or_shows_what_was_not_checked(tmp_path):
    """Hostile review, round 20: each section shows the report of its own derivation (two of
    one name included), headings and prose reach TeX only escaped, math only when TeX can set
    it, names and reasons are cut to a length TeX sets quickly, and neither edition breaks."""
    folder = tmp_path / "mine" / "softmax"  # a folder of one's own, named like the catalogue's
    folder.mkdir(parents=True)
    for name, source in HOSTILE.items():
        (folder / name).write_text("from sympy import *\nfrom sdpa_proofs import *\n" + source)
    out = tmp_path / "out"
    code = main(["report", str(folder), "-o", str(out), "--lang", "en", "--lang", "zh",
                 "--pdf", "--no-monte-carlo"])
    assert code == 1  # the false twin fails; everything else verifies
    for lang in ("en", "zh"):
        words = assert_compiled(out / f"report-{lang}.pdf", names=["twin", "names", "headings.a"])
        assert "x}}INJECTED TEXT%" in words  # the title as written, as a title
        tex = (out / f"report-{lang}.tex").read_text()
        assert "Softmax" not in tex.split(r"\begin{document}")[1].split(r"\section")[1][:80]
        assert r"\mathscr" not in tex and r"\frac{" not in tex
    english = (out / "report-en.tex").read_text()
    statuses = re.findall(r"\\texttt\{twin\}.*?Status: \\textbf\{(\w+)\}", english, re.S)
    assert sorted(statuses) == ["failed", "verified"]


def test_a_compiler_that_does_not_finish_is_stopped_and_said_plainly(tmp_path, monkeypatch):
    def stalled(command, **_):
        raise subprocess.TimeoutExpired(command, 600)

    monkeypatch.setattr(shutil, "which", lambda _: "/usr/bin/pdflatex")
    monkeypatch.setattr(subprocess, "run", stalled)
    tex = tmp_path / "report-en.tex"
    tex.write_text("x")
    with pytest.raises(CompileError, match="did not finish .* and was stopped"):
        compile_pdf(tex, "en")
