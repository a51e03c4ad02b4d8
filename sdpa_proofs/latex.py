"""LaTeX rendering: a SymPy LatexPrinter that writes E, Var, sd and sums as a mathematician does,
and a standalone document per derivation (compiles with pdflatex, amsmath only)."""

from __future__ import annotations

import re

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
from .texsafe import escape, text
from .text import REACHING, in_reading_order


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
        if _IDENTIFIER.fullmatch(expr.name):
            return super()._print_Symbol(expr, style)
        return r"\text{%s}" % escape(expr.name)

    _print_Dummy = _print_Symbol

    def _print_Function(self, expr: Expr, exp: str | None = None) -> str:
        name = expr.func.__name__
        if isinstance(expr, AppliedUndef) and not _IDENTIFIER.fullmatch(name):
            arguments = ", ".join(self._print(a) for a in expr.args)
            printed = r"\text{%s}\left(%s\right)" % (escape(name), arguments)
            return printed if exp is None else r"%s^{%s}" % (printed, exp)
        return super()._print_Function(expr, exp)

    def _print_Mul(self, expr: Expr) -> str:
        return in_reading_order(self, expr, super()._print_Mul)

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


def rule_citation(by) -> str:
    """How a step's rules read in the margin: the built-in rules' own LaTeX; a lemma as its
    equation, printed here; anything of the user's as escaped text."""
    try:
        rules = resolve(by)
    except KeyError:
        return text(str(by))
    return "; ".join(_citation(r) for r in rules)


def _citation(rule) -> str:
    if is_builtin(rule):
        return rule.latex if rule.latex.startswith("$") else text(rule.latex)
    if isinstance(rule, Lemma):
        equation = rule.equation
        return rf"by ${to_latex(equation.lhs)} = {to_latex(equation.rhs)}$"
    if isinstance(rule, Cite):
        return "by " + escape(rule.derivation.name)
    return "by " + escape(str(getattr(rule, "name", "") or type(rule).__name__))


def derivation_math(derivation: Derivation) -> str:
    """The chain as one aligned display (used by Jupyter via _repr_latex_)."""
    return "$$" + _aligned(derivation, "alignedat", compact=True) + "$$"


def _aligned(derivation: Derivation, environment: str, compact: bool = False) -> str:
    lines = []
    for n, step in enumerate(derivation.steps, 1):
        left = to_latex(derivation.claim.lhs) if n == 1 else ""
        margin = rf"\text{{({n}) {rule_citation(step.by)}}}"
        if not compact and step.why:
            margin = (rf"\parbox[t]{{0.3\linewidth}}{{\raggedright\footnotesize ({n}) "
                      rf"{rule_citation(step.by)}: {text(step.why)}}}")
        lines.append(rf"{left} &{LATEX_RELATIONS[step.rel]} {to_latex(step.expr)} &\qquad& "
                     rf"{margin}")
    return (rf"\begin{{{environment}}}{{2}}" + " \\\\\n".join(lines) +
            rf"\end{{{environment}}}")


def _definitions(derivation: Derivation) -> str:
    if not derivation.where:
        return ""
    parts = ", ".join(f"{to_latex(k)} = {to_latex(v)}" for k, v in derivation.where.items())
    return rf" where ${parts}$"


def _verification(report: DerivationReport | None) -> str:
    if report is None or not report.models:
        return ""
    rows = []
    for m in report.models:
        digits = [s.numeric_check.digits for s in m.steps if s.numeric_check.digits is not None]
        mc = ", ".join(f"${escape(r.dimension)}={r.d}$: {r.estimate:.4g} "
                       f"[{r.ci_low:.4g}, {r.ci_high:.4g}]"
                       for r in m.monte_carlo if r.status != "n/a") or "--"
        rows.append(rf"{text(m.model)} & {text(m.status)} & "
                    rf"{min(digits) if digits else 0:.0f} & {mc} \\")
    return ("\n\\paragraph{Machine check.} Every step was checked by its rule and by exact "
            "moments for symbolic $d$, and integrated numerically at $d = 1, 2, 3$; the final "
            "claim was estimated by Monte Carlo (95\\% intervals).\n\n"
            "\\begin{center}\\footnotesize\\begin{tabular}{llrp{0.5\\linewidth}}\n"
            "model & status & digits & Monte Carlo \\\\ \\hline\n" + "\n".join(rows) +
            "\n\\end{tabular}\\end{center}\n")


def document(derivation: Derivation, report: DerivationReport | None = None,
             assumptions: list = ()) -> str:
    """A standalone article: title, the models' assumptions, the claim, the proof (and what it
    rests on beyond the toolkit's trusted base), the check."""
    laws = [rf"\item \emph{{{text(model.title)}}}: " + " ".join(map(text, model.assumptions()))
            for model in resolve_models(derivation.models)]
    resting = [_assumption(x) for x in assumptions]
    claim = (f"{to_latex(derivation.claim.lhs)} {LATEX_RELATIONS[derivation.relation]} "
             f"{to_latex(derivation.claim.rhs)}")
    distinct = "".join(rf" for ${to_latex(a)} \neq {to_latex(b)}$"
                       for a, b in (sorted(p, key=str) for p in derivation.distinct))
    return "\n".join([
        r"\documentclass[11pt]{article}",
        r"\usepackage{amsmath,amssymb}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\allowdisplaybreaks",
        r"\begin{document}",
        rf"\section*{{{text(derivation.title or derivation.name)}}}",
        r"\paragraph{Assumptions.} The claim is asserted under each of these models:",
        r"\begin{itemize}", *laws, r"\end{itemize}",
        rf"\paragraph{{Claim.}} \[ {claim} \]{_definitions(derivation)}{distinct}"
        + ("." if derivation.where or derivation.distinct else ""),
        r"\paragraph{Proof.}",
        _aligned(derivation, "alignat*"),
        _resting_on(resting),
        text(derivation.notes),
        _verification(report),
        r"\end{document}", ""])


def _assumption(assumed) -> str:
    """A model, user rule or lemma that a proof rests on (see runner.assumed), in LaTeX."""
    if isinstance(assumed, Lemma):
        equation = assumed.equation
        return (rf"the lemma {text(assumed.label)}, ${to_latex(equation.lhs)} = "
                rf"{to_latex(equation.rhs)}$, established by the exact engine under each model")
    if isinstance(assumed, UserRule):
        return (rf"the rule \texttt{{{text(assumed.name)}}} of the user's own code "
                rf"(\texttt{{{text(assumed.origin)}}})")
    return rf"the model \texttt{{{text(assumed.name)}}}, defined by the user"


def _resting_on(assumptions: list[str]) -> str:
    if not assumptions:
        return ""
    items = "\n".join(rf"\item {a}" for a in assumptions)
    return ("\\paragraph{The proof rests on.} Beyond the toolkit's trusted base, on:\n"
            rf"\begin{{itemize}}{items}\end{{itemize}}")


__all__ = ["ProofPrinter", "to_latex", "document", "derivation_math"]
