"""Moments on demand: ask for E[...], Var(...), sd(...) or Cov(...) under a model, before
writing any proof, and get the exact closed form for symbolic d; optionally its value at a
concrete d and parameter point (exact, and to the digits asked) and a Monte Carlo estimate with
its 95% interval.

    >>> print(moment("Var(S)", "shared-factor"))
    Var(S) under shared-factor = d·(α²·σ_k² + β²·σ_q² + σ_q²·σ_k² + 2·d·α²·β²)

S (= sum_i q_i k_i) and S~ (= sum_i q_i k~_i) are understood; ``where`` adds abbreviations of
one's own.  A name that is neither a model's symbol nor an abbreviation is an error that says
so, never silently kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from tokenize import TokenError

import sympy as sp
from sympy import Expr

from . import expressions, models, symbols
from .errors import BadInput
from .expressions import (
    MOMENT_FUNCTIONS,
    index_symbols,
    is_random_coordinate,
    moment_atoms,
    random_coordinates,
    unfold,
)
from .latex import to_latex
from .limits import Lim
from .models import MODELS, Model, get_model
from .moments import ExactEvaluator
from .montecarlo import check_claim
from .text import show
from .validation import parameter_domains
from .verdicts import MonteCarloResult

ABBREVIATIONS = {symbols.S: symbols.dot_product, symbols.S_tilde: symbols.other_dot_product}


@dataclass
class Answer:
    """A moment question and its answers under one model."""

    question: Expr
    model: Model
    closed_form: Expr
    at: dict | None = None  # the concrete d and parameters, when asked
    value: Expr | None = None  # the closed form there, exactly
    digits: int | None = None
    monte_carlo: MonteCarloResult | None = None

    @property
    def numeric(self) -> str | None:
        """The value at ``at`` to ``digits`` significant digits."""
        if self.value is None:
            return None
        return str(sp.N(self.value, self.digits or 30))

    def __str__(self) -> str:
        lines = [f"{show(self.question)} under {self.model.name} = {show(self.closed_form)}"]
        if self.at is not None:
            where = ", ".join(f"{show(k)} = {show(v)}" for k, v in self.at.items())
            lines.append(f"at {where}: {show(self.value)} ≈ {self.numeric}")
        if self.monte_carlo is not None:
            r = self.monte_carlo
            lines.append(f"Monte Carlo ({r.samples} samples): {r.estimate:.6g}, 95% interval "
                         f"[{r.ci_low:.6g}, {r.ci_high:.6g}], {r.status}")
        return "\n".join(lines)

    def latex(self) -> str:
        return f"{to_latex(self.question)} = {to_latex(self.closed_form)}"

    def _repr_markdown_(self) -> str:
        """How an answer shows itself in Jupyter: the closed form as mathematics, then the
        value and the Monte Carlo estimate, if asked for."""
        details = "\n".join(f"- {line}" for line in str(self).splitlines()[1:])
        return f"Under `{self.model.name}`: ${self.latex()}$\n\n{details}".strip()

    def as_json(self) -> dict:
        """The answer as data: expressions as strings that ``parse_question`` reads back (plain
        ``sympify`` reads them too, but takes beta for SymPy's beta function)."""
        data = {"question": sp.sstr(self.question), "model": self.model.name,
                "closed_form": sp.sstr(self.closed_form), "latex": self.latex()}
        if self.at is not None:
            data["at"] = {str(k): sp.sstr(v) for k, v in self.at.items()}
            data["value"] = sp.sstr(self.value)
            data["numeric"] = self.numeric
        if self.monte_carlo is not None:
            r = self.monte_carlo
            data["monte_carlo"] = {"d": r.d, "samples": r.samples, "estimate": r.estimate,
                                   "ci_low": r.ci_low, "ci_high": r.ci_high, "status": r.status}
        return data


def moment(question: str | Expr, model: str | Model, where: dict | None = None,
           d: int | None = None, point: dict | None = None, digits: int | None = None,
           monte_carlo: bool = False) -> Answer:
    """The exact closed form of ``question`` (an expression in E, Var, SD, Cov) under
    ``model`` for symbolic d; with ``d``, also its value at that dimension and ``point`` (the
    model's first parameter point unless given) to ``digits`` digits, and with
    ``monte_carlo`` a Monte Carlo estimate there."""
    model = get_model(model) if isinstance(model, str) else model
    if MODELS.get(model.name) is not model:  # a model of one's own: its points checked first
        parameter_domains(model)
    asked = parse_question(question) if isinstance(question, str) else sp.sympify(question)
    unfolded = unfold(asked, {**ABBREVIATIONS, **(where or {})})
    _check_names(asked, unfolded, model)
    answer = Answer(asked, model, tidy(ExactEvaluator(model).value(unfolded)), digits=digits)
    if d is None:
        return answer
    if d < 1:
        raise BadInput(f"d = {d}: the dimension is a positive integer")
    point = dict(point or model.parameter_points[0])
    substitution = model.concrete(point, d)
    answer.at = {model.dimension: sp.Integer(d), **point}
    answer.value = sp.simplify(answer.closed_form.xreplace(substitution).doit()
                               .xreplace(substitution))
    if monte_carlo:
        (answer.monte_carlo,) = check_claim(sp.Eq(unfolded, answer.closed_form, evaluate=False),
                                            model, dims=(d,))
    return answer


def parse_question(text: str) -> Expr:
    """An expression typed as text, in the toolkit's names (beta is the model parameter, not
    SymPy's beta function): E[...] may be written E(...).  It also reads back the closed forms
    that ``Answer.as_json`` writes."""
    names = {name: getattr(symbols, name) for name in dir(symbols) if not name.startswith("_")}
    names.update({name: getattr(expressions, name)
                  for name in ("E", "Var", "SD", "Cov", "SumOverDistinct", "MaxOver")})
    names.update({"Sum": sp.Sum, "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "oo": sp.oo})
    names.update({name: getattr(models, name) for name in (
        "alpha", "beta", "rho", "mu_q", "mu_k", "sigma_w", "Sigma_qq", "Sigma_kk", "Sigma_qk",
        "m_q", "m_k")})
    try:
        return sp.parse_expr(_expectation_brackets(text), local_dict=names)
    except (SyntaxError, TypeError, ValueError, sp.SympifyError, TokenError) as error:
        raise BadInput(f"cannot read {text!r} as an expression: {error}") from error


def read_srepr(text: str) -> Expr:
    """An expression from its SymPy srepr (the JSON report's ``claim_srepr``), exactly: SymPy's
    classes and the toolkit's constructs, which plain sympify does not know."""
    names = {name: getattr(expressions, name) for name in (
        "E", "Var", "SD", "Cov", "SumOverDistinct", "MaxOver", "RandomVector",
        "SymmetricMatrix")}
    try:
        return sp.sympify(text, locals={**names, "Lim": Lim})
    except (SyntaxError, TypeError, ValueError, sp.SympifyError) as error:
        raise BadInput(f"cannot read {text[:60]!r} as an srepr: {error}") from error


def _expectation_brackets(text: str) -> str:
    """E[X] (or Var[X], ...) written as E(X): the brackets that follow a moment's name become
    parentheses (q[1] keeps its index brackets)."""
    out, closing, depth = [], [], 0
    for n, char in enumerate(text):
        if char == "[":
            depth += 1
            expectation = _moment_name_before(text, n)
            if expectation:
                closing.append(depth)
            out.append("(" if expectation else char)
        elif char == "]":
            out.append(")" if closing and closing[-1] == depth else char)
            if closing and closing[-1] == depth:
                closing.pop()
            depth -= 1
        else:
            out.append(char)
    return "".join(out)


MOMENT_NAMES = ("E", "Var", "SD", "Cov")


def _moment_name_before(text: str, position: int) -> bool:
    """Whether a moment's name (E, Var, SD, Cov) ends just before ``position``."""
    for name in MOMENT_NAMES:
        start = position - len(name)
        if start >= 0 and text[start:position] == name and (
                start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")):
            return True
    return False


def tidy(expr: Expr) -> Expr:
    """The same value in its most readable form (fewest operations among the expanded, the
    factored and the form collected in powers of d), with the bound indices of nested sums
    given distinct names."""
    expr = _distinct_bound_names(expr)
    if expr.has(sp.Sum):
        return expr
    forms = [sp.expand(expr), sp.factor(expr)]
    forms += [sp.collect(sp.expand(expr), x, sp.factor) for x in sorted(
        expr.free_symbols, key=str) if x.is_integer]
    return min(forms, key=sp.count_ops)


def _distinct_bound_names(expr: Expr) -> Expr:
    """Sums whose bound indices the exact engine named alike, renamed i, j, a, b, ..."""
    pool = [sp.Symbol(name, integer=True, positive=True) for name in "ijabcefgh"]
    taken = {str(x) for x in expr.free_symbols}
    names = iter(x for x in pool if str(x) not in taken)

    def rename(e: Expr) -> Expr:
        if not e.args:
            return e
        e = e.func(*(rename(a) for a in e.args))
        if isinstance(e, sp.Sum):
            body, limits = e.function, []
            for var, lo, hi in e.limits:
                fresh = next(names, None)
                if fresh is None:
                    return e
                body = body.xreplace({var: fresh})
                limits.append((fresh, lo, hi))
            return sp.Sum(body, *limits)
        return e
    return rename(expr)


def _check_names(asked: Expr, unfolded: Expr, model: Model) -> None:
    """Every name must mean something under the model; and a random coordinate must sit
    inside a moment (the answer is a number, not a random variable)."""
    if not moment_atoms(unfolded) and not isinstance(unfolded, MOMENT_FUNCTIONS):
        raise BadInput(f"{show(asked)} asks for no moment: write E(...), Var(...), SD(...) or "
                       "Cov(..., ...)")
    outside = random_coordinates(unfolded.xreplace({a: sp.Dummy() for a in
                                                    moment_atoms(unfolded)}))
    if outside:
        raise BadInput(f"{show(asked)}: {show(sorted(outside, key=str)[0])} stands outside any "
                       "moment")
    strangers = sorted({c.base for c in unfolded.atoms(sp.Indexed) if is_random_coordinate(c)}
                       - set(model.vectors), key=str)
    if strangers:
        raise BadInput(f"{show(asked)}: model {model.name} has no law for "
                       f"{', '.join(str(v.label) for v in strangers)} (it knows "
                       f"{', '.join(str(v.label) for v in model.vectors)})")
    known = {model.dimension} | set(model.parameter_points[0]) | index_symbols(unfolded) | \
        {x.base.label for x in unfolded.atoms(sp.Indexed)}
    unknown = sorted((s for s in unfolded.free_symbols
                      if type(s) is sp.Symbol and s not in known), key=str)
    if unknown:
        raise BadInput(f"{show(asked)}: {', '.join(map(show, unknown))} means nothing under "
                       f"{model.name} (its symbols: "
                       f"{', '.join(map(show, sorted(known, key=str)))}; S and S̃ are "
                       "understood; other abbreviations are passed to moment(..., where=...) "
                       "in Python)")
