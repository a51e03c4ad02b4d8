"""LaTeX rendering: a SymPy LatexPrinter that writes E, Var, sd and sums as a mathematician does,
and a standalone document per derivation (compiles with pdflatex, amsmath only)."""

from __future__ import annotations

import re
from functools import partial

from sympy import Add, Expr
from sympy.core.function import AppliedUndef
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE

from .citations import Cite
from .derivation import Derivation
from .models import resolve_models
from .registry import is_builtin, resolve
from .report import DerivationReport
from .rules import Lemma
from .sealing import UserRule
from .texsafe import escape, safe_math, text
from .text import REACHING, in_reading_order
from .translations import assumptions_in, translate
from .validation import conditions_as_written


class ProofPrinter(LatexPrinter):
    """E[X], Var(X), sd(X); nested sums as sum_i sum_j; the off-diagonal sum as sum_{i != j};
    products in reading order (d, then q before k) rather than SymPy's alphabetical order.
    A name that is not a plain identifier (a user's Symbol("\\input{...}")) prints as
    escaped text, never as TeX."""

    def parenthesize(self, item, level, is_neg=False, strict=False) -> str:
        """A sum, maximum or derivative as a factor or a base is bracketed whole, as in the
        text form (see text.TextPrinter.parenthesize)."""
        if isinstance(item, REACHING) and level >= PRECEDENCE["Mul"]:
            return r"\left(%s\right)" % self._print(item)
        return super().parenthesize(item, level, is_neg, strict)

    def _needs_add_brackets(self, expr) -> bool:
        """A sum, maximum or derivative as a term is bracketed, as in the text form."""
        return isinstance(expr, REACHING) or super()._needs_add_brackets(expr)

    def _needs_mul_brackets(self, expr, first=False, last=False) -> bool:
        """A sum, maximum or derivative before another factor would reach over it."""
        if isinstance(expr, REACHING) and not last:
            return True
        return super()._needs_mul_brackets(expr, first, last)

    def _print_Symbol(self, expr: Expr, style: str = "plain") -> str:
        """SymPy's rendering (sigma_q as \\sigma_{q}) when it is math the document can set;
        a name SymPy would turn into a command it does not load (xscr as \\mathscr{x}) or
        one that is not an identifier prints as escaped text."""
        if _IDENTIFIER.fullmatch(expr.name):
            printed = super()._print_Symbol(expr, style)
            if safe_math(printed):
                return printed
        return r"\text{%s}" % escape(expr.name)

    _print_Dummy = _print_Symbol

    def _print_Function(self, expr: Expr, exp: str | None = None) -> str:
        """A function of the user's own prints as its name (never as the TeX command of the
        same name: f called frac is not a fraction)."""
        name = expr.func.__name__
        if isinstance(expr, AppliedUndef):
            arguments = ", ".join(self._print(a) for a in expr.args)
            shown = name if len(name) == 1 and name.isalpha() else \
                r"\operatorname{%s}" % name if _IDENTIFIER.fullmatch(name) else \
                r"\text{%s}" % escape(name)
            printed = r"%s\left(%s\right)" % (shown, arguments)
            return printed if exp is None else r"%s^{%s}" % (printed, exp)
        return super()._print_Function(expr, exp)

    def _print_Mul(self, expr: Expr) -> str:
        return in_reading_order(self, expr, super()._print_Mul)

    def _as_ordered_terms(self, expr: Expr, order=None) -> list:
        """A sum's terms with the subtracted ones last, E[S^2] - E[S]^2 and d - 1 as they are
        written by hand (SymPy keeps no record of the order typed, and its own order puts
        -E[S]^2 first); within each group SymPy's order."""
        terms = super()._as_ordered_terms(expr, order)
        if not isinstance(expr, Add):
            return terms
        subtracted = [t for t in terms if t.could_extract_minus_sign()]
        return [t for t in terms if t not in subtracted] + subtracted

    def _moment(self, template: str, expr: Expr, exp: str | None) -> str:
        printed = template % self._print(expr.args[0])
        return printed if exp is None else r"%s^{%s}" % (printed, exp)

    def _print_E(self, expr: Expr, exp: str | None = None) -> str:
        return self._moment(r"\mathbb{E}\left[%s\right]", expr, exp)

    def _print_Var(self, expr: Expr, exp: str | None = None) -> str:
        return self._moment(r"\operatorname{Var}\mathopen{}\left(%s\right)", expr, exp)

    def _print_SD(self, expr: Expr, exp: str | None = None) -> str:
        return self._moment(r"\operatorname{sd}\mathopen{}\left(%s\right)", expr, exp)

    def _print_Indexed(self, expr: Expr) -> str:
        """Entries of named matrices as (Sigma_{qk})_{ij}; coordinates as q_i."""
        base = self._print(expr.base.label)
        indices = " ".join(self._print(i) for i in expr.indices)
        if "_" in expr.base.label.name:
            return r"\left(%s\right)_{%s}" % (base, indices)
        return r"{%s}_{%s}" % (base, indices)

    def _print_Cov(self, expr: Expr, exp: str | None = None) -> str:
        x, y = (self._print(a) for a in expr.args)
        printed = r"\operatorname{Cov}\mathopen{}\left(%s, %s\right)" % (x, y)
        return printed if exp is None else r"%s^{%s}" % (printed, exp)

    def _summand(self, body: Expr) -> str:
        printed = self._print(body)
        return r"\left(%s\right)" % printed if isinstance(body, Add) else printed

    def _print_Sum(self, expr: Expr) -> str:
        signs = "".join(r"\sum_{%s=%s}^{%s} " % tuple(self._print(x) for x in limit)
                        for limit in reversed(expr.limits))
        return signs + self._summand(expr.function)

    def _print_SumOverDistinct(self, expr: Expr) -> str:
        i, j = (self._print(x) for x in expr.indices)
        return r"\sum_{%s \neq %s}^{%s} %s" % (i, j, self._print(expr.upper),
                                             self._summand(expr.function))

    def _print_MaxOver(self, expr: Expr) -> str:
        (index, lower, upper), = expr.limits
        limit = r"%s=%s,\dots,%s" % tuple(self._print(x) for x in (index, lower, upper))
        return r"\max_{%s} %s" % (limit, self._summand(expr.function))

    def _print_Lim(self, expr: Expr) -> str:
        """The almost-sure limit, lim_{n -> oo} X_n."""
        return r"\lim_{%s \to \infty} %s" % (self._print(expr.variable),
                                              self._summand(expr.body))


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
LATEX_RELATIONS = {"=": "=", "<=": r"\le", "<": "<", ">=": r"\ge", ">": ">"}


def to_latex(expr: Expr) -> str:
    return ProofPrinter().doprint(expr)


def rule_citation(by, lang: str = "en") -> str:
    """How a step's rules read in the margin: the built-in rules' own LaTeX; a lemma as its
    equation, printed here; anything of the user's as escaped text."""
    try:
        rules = resolve(by)
    except KeyError:
        return text(str(by), lang != "en")
    return "; ".join(_citation(r, lang) for r in rules)


def _citation(rule, lang: str = "en") -> str:
    say = partial(translate, lang=lang)
    if is_builtin(rule):
        return say(rule.latex) if rule.latex.startswith("$") else text(say(rule.latex), True)
    if isinstance(rule, Lemma):
        equation = rule.equation
        return rf"{say('by')} ${to_latex(equation.lhs)} = {to_latex(equation.rhs)}$"
    if isinstance(rule, Cite):
        return say("by") + " " + escape(rule.derivation.name)
    # never "by NAME" alone, which is how a citation of the derivation NAME reads
    return say("by the user's rule") + " " + escape(str(getattr(rule, "name", "")
                                                        or type(rule).__name__))


def derivation_math(derivation: Derivation) -> str:
    """The chain as one aligned display (used by Jupyter via _repr_latex_)."""
    return "$$" + _aligned(derivation, "alignedat", compact=True) + "$$"


def _aligned(derivation: Derivation, environment: str, compact: bool = False,
             lang: str = "en") -> str:
    """The chain lhs = e_1 = e_2 ..., one line per step.  Compact (Jupyter): each line cites its
    rules beside it.  Otherwise each line is numbered, and the justifications follow as a list,
    (n) rules: why, where no width of formula can push them off the page."""
    lines, reasons = [], []
    for n, step in enumerate(derivation.steps, 1):
        left = to_latex(derivation.claim.lhs) if n == 1 else ""
        citation = rule_citation(step.by, lang)
        if compact:
            lines.append(rf"{left} &{LATEX_RELATIONS[step.rel]} {to_latex(step.expr)} "
                         rf"&\qquad& \text{{({n}) {citation}}}")
            continue
        lines.append(rf"{left} &{LATEX_RELATIONS[step.rel]} {to_latex(step.expr)} \tag{{{n}}}")
        why = text(prose(step.why), lang != "en")
        # a reason that only repeats the rule's name (in either language) is said once
        repeats = why.strip(" .") in (citation.strip(" ."), rule_citation(step.by).strip(" ."))
        reasons.append(rf"\item[({n})] {citation}" + ("" if not step.why or repeats
                                                     else f": {why}"))
    if compact:
        return (rf"\begin{{{environment}}}{{2}}" + " \\\\\n".join(lines) +
                rf"\end{{{environment}}}")
    return ("\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}\n"
            "\\begin{itemize}\\footnotesize\n" + "\n".join(reasons) + "\n\\end{itemize}")


LONGEST_PROSE = 2000  # characters of a reason or a note shown; TeX's input lines are bounded
LONGEST_WORD = 60  # TeX breaks lines only between words (a long one can stall xelatex)


def prose(words: str, longest: int = LONGEST_PROSE) -> str:
    """User prose as the documents show it: at most ``longest`` characters, and no word
    longer than LONGEST_WORD (a longer one is split with spaces, so lines can break)."""
    if len(words) > longest:
        words = words[:longest] + "…"
    return re.sub(r"\S{%d}(?=\S)" % LONGEST_WORD, lambda m: m.group(0) + " ", words)


def claim_latex(derivation: Derivation) -> str:
    return (f"{to_latex(derivation.claim.lhs)} {LATEX_RELATIONS[derivation.relation]} "
            f"{to_latex(derivation.claim.rhs)}")


def _definitions(derivation: Derivation, lang: str = "en") -> str:
    if not derivation.where:
        return ""
    parts = ", ".join(f"{to_latex(k)} = {to_latex(v)}" for k, v in derivation.where.items())
    return rf" {translate('where', lang)} ${parts}$"


def _distinct(derivation: Derivation, report: DerivationReport | None = None,
              lang: str = "en") -> str:
    """The hypotheses i ≠ j and the claim's conditions (c > 0, c ≠ 2): the report's, which
    include where the moments that divide are not 0 under its models, else those of the claim
    as written (Var(q_1) ≠ 0)."""
    pairs = [rf"{to_latex(a)} \neq {to_latex(b)}"
             for a, b in (sorted(p, key=str) for p in derivation.distinct)]
    described = report is not None and report.claim  # a report of bad input describes nothing
    declared = report.conditions_latex if described else [
        to_latex(c) for c in conditions_as_written(derivation, resolve_models(derivation.models))]
    items = pairs + declared
    return f" {translate('for', lang)} " + ", ".join(f"${x}$" for x in items) if items else ""


def _verification(report: DerivationReport | None, lang: str = "en") -> str:
    if report is None or not report.models:
        return ""
    say = partial(translate, lang=lang)
    rows, sampled = [], False
    for m in report.models:
        digits = [s.numeric_check.digits for s in m.steps if s.numeric_check.digits is not None]
        estimates = [r for r in m.monte_carlo if r.status != "n/a"]
        sampled = sampled or bool(estimates)
        mc = ", ".join(f"${escape(r.dimension)}={r.d}$: {r.estimate:.4g} "
                       f"[{r.ci_low:.4g}, {r.ci_high:.4g}]" for r in estimates) or "--"
        rows.append(rf"{text(m.model)} & {say(m.status)} & "
                    rf"{min(digits) if digits else 0:.0f} & {mc} \\")
    return (f"\n\\paragraph{{{say('Machine check.')}}} " + say(
        "Every step was checked by its rule and by exact moments for symbolic $d$, and "
        "integrated numerically at $d = 1, 2, 3$.")
        + (" " + say("The final claim was estimated by Monte Carlo (95\\% intervals).")
           if sampled else "") + "\n\n"
        "\\begin{center}\\footnotesize\\begin{tabular}{llrp{0.5\\linewidth}}\n"
        f"{say('model')} & {say('status')} & {say('digits')} & {say('Monte Carlo')} "
        "\\\\ \\hline\n" + "\n".join(rows) + "\n\\end{tabular}\\end{center}\n")


def model_items(derivation: Derivation, lang: str = "en") -> list[str]:
    """The models' titles and assumptions, one list item each."""
    return [rf"\item \emph{{{text(translate(model.title, lang), lang != 'en')}}}: "
            + " ".join(text(a, lang != "en") for a in assumptions_in(model, lang))
            for model in resolve_models(derivation.models)]


def document(derivation: Derivation, report: DerivationReport | None = None,
             assumptions: list = ()) -> str:
    """A standalone article: title, the models' assumptions, the claim, the proof (and what it
    rests on beyond the toolkit's trusted base), the check."""
    return "\n".join([
        r"\documentclass[11pt]{article}",
        r"\usepackage{amsmath,amssymb}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\allowdisplaybreaks",
        r"\begin{document}",
        rf"\section*{{{text(derivation.title or derivation.name)}}}",
        derivation_body(derivation, report, assumptions),
        r"\end{document}", ""])


def derivation_body(derivation: Derivation, report: DerivationReport | None = None,
                    assumptions: list = (), lang: str = "en") -> str:
    """Assumptions, claim, proof, what it rests on, notes and the machine check: the body of a
    derivation's section, in the language asked for (the formulas are the same in each)."""
    say = partial(translate, lang=lang)
    resting = [_assumption(x, lang) for x in assumptions]
    qualified = _definitions(derivation, lang) + _distinct(derivation, report, lang)
    return "\n".join([
        rf"\paragraph{{{say('Assumptions.')}}} "
        + say("The claim is asserted under each of these models:"),
        r"\begin{itemize}", *model_items(derivation, lang), r"\end{itemize}",
        rf"\paragraph{{{say('Claim.')}}} \[ {claim_latex(derivation)} \]"
        + qualified + ("." if qualified else ""),
        rf"\paragraph{{{say('Proof.')}}}",
        _aligned(derivation, "align*", lang=lang),
        _resting_on(resting, lang),
        text(prose(derivation.notes), lang != "en"),
        _verification(report, lang)])


def _assumption(assumed, lang: str = "en") -> str:
    """A model, user rule or lemma that a proof rests on (see runner.assumed), in LaTeX."""
    say = partial(translate, lang=lang)
    if isinstance(assumed, Lemma):
        equation = assumed.equation
        return (rf"{say('the lemma')} ${to_latex(equation.lhs)} = {to_latex(equation.rhs)}$, "
                + say("established by the exact engine under each model"))
    if isinstance(assumed, UserRule):
        return (rf"{say('the rule')} \texttt{{{text(assumed.name)}}} "
                rf"{say('of the user' + chr(39) + 's own code')} "
                rf"(\texttt{{{text(assumed.origin)}}})")
    return rf"{say('the model')} \texttt{{{text(assumed.name)}}}, {say('defined by the user')}"


def _resting_on(assumptions: list[str], lang: str = "en") -> str:
    if not assumptions:
        return ""
    items = "\n".join(rf"\item {a}" for a in assumptions)
    return (f"\\paragraph{{{translate('The proof rests on.', lang)}}} "
            f"{translate('Beyond the toolkit' + chr(39) + 's trusted base, on:', lang)}\n"
            rf"\begin{{itemize}}{items}\end{{itemize}}")


__all__ = ["ProofPrinter", "claim_latex", "derivation_body", "derivation_math", "document",
           "to_latex"]
