"""Sealing: a derivation as plain data, so that the process that checks it never runs its file.

A derivation file is code: it could patch the checker, SymPy or the rule registry in the process
that runs it.  So a file runs in a worker of its own, which turns each derivation into JSON:
expressions as trees of a fixed vocabulary of SymPy classes, rules by their registry names,
models by name or as data.  A fresh worker that never ran the file rebuilds the derivation from
that JSON and checks it.  What cannot be data (a rule of the user's own code) is marked as such:
its rule check runs beside the file, and every output lists it as an assumption.
"""

from __future__ import annotations

import re
from typing import Any

import sympy as sp
from sympy import Expr

from . import expressions
from .citations import Cite
from .derivation import Derivation, Step, justifications
from .distributions import FAMILIES
from .errors import BadInput
from .limits import Lim
from .models import MODELS, GaussianMatrixModel, Latent, LatentLinearModel, Model
from .registry import RULES, is_builtin
from .rules import Lemma, Rule
from .text import printable

#: the SymPy classes a sealed expression may be built from, by name
VOCABULARY = {cls.__name__: cls for cls in (
    sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.Abs, sp.sign, sp.Max, sp.Min, sp.floor,
    sp.ceiling, sp.KroneckerDelta, sp.Derivative, sp.Sum, sp.Tuple, sp.Indexed, sp.factorial,
    sp.binomial, sp.Eq, sp.Ne, sp.Le, sp.Lt, sp.Ge, sp.Gt, sp.sin, sp.cos, sp.tanh,
    expressions.E, expressions.Var, expressions.SD, expressions.Cov,
    expressions.SumOverDistinct, expressions.MaxOver, Lim)}
VECTORS = {cls.__name__: cls for cls in (sp.IndexedBase, expressions.RandomVector,
                                         expressions.SymmetricMatrix)}
#: the constants a derivation may use: real ones (the checks compare real numbers)
CONSTANTS = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "-oo": -sp.oo, "EulerGamma": sp.EulerGamma}
_UNEVALUATED = (sp.Add, sp.Mul, sp.Pow)  # rebuilt exactly as written, not re-simplified


def seal_expr(expr: Any) -> list:
    """A SymPy expression as nested JSON lists; anything outside the vocabulary is bad input."""
    expr = sp.sympify(expr)
    kind = type(expr)
    if isinstance(expr, sp.Integer):
        return ["Integer", str(int(expr))]
    if isinstance(expr, sp.Rational):
        return ["Rational", str(int(expr.p)), str(int(expr.q))]
    if isinstance(expr, sp.Float):  # 1 + Float("0.003", 1) - 1 is 0 to SymPy: not exact math
        raise BadInput(f"the floating-point number {expr} has no exact value: write it as a "
                       f"fraction, Rational({sp.Rational(str(expr)).p}, "
                       f"{sp.Rational(str(expr)).q})")
    for name, constant in CONSTANTS.items():
        if expr is constant:
            return ["Constant", name]
    if kind is sp.Symbol:
        return ["Symbol", expr.name, _assumptions(expr)]
    if kind is sp.Dummy:
        return ["Dummy", expr.name, expr.dummy_index, _assumptions(expr)]
    if kind.__name__ in VECTORS and VECTORS[kind.__name__] is kind:
        return [kind.__name__, seal_expr(expr.label)]
    if isinstance(expr, sp.core.function.AppliedUndef):
        return ["Undefined", expr.func.__name__, *map(seal_expr, expr.args)]
    if VOCABULARY.get(kind.__name__) is kind:
        return [kind.__name__, *map(seal_expr, expr.args)]
    raise BadInput(f"{kind.__module__}.{kind.__qualname__} ({expr}) is not part of the "
                   f"vocabulary of derivations: use {', '.join(sorted(VOCABULARY))}")


def _assumptions(symbol: sp.Symbol) -> dict:
    return {k: bool(v) for k, v in symbol._assumptions_orig.items() if v is not None}


def unseal_expr(data: list) -> Expr:
    """The expression a sealed tree stands for; a tree that names anything else is bad input."""
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise BadInput(f"not a sealed expression: {data!r}")
    head, *rest = data
    if head == "Integer":
        return sp.Integer(int(rest[0]))
    if head == "Rational":
        return sp.Rational(int(rest[0]), int(rest[1]))
    if head == "Constant":
        return CONSTANTS[rest[0]]
    if head == "Symbol":
        return sp.Symbol(_text(rest[0]), **_flags(rest[1]))
    if head == "Dummy":
        return sp.Dummy(_text(rest[0]), dummy_index=int(rest[1]), **_flags(rest[2]))
    if head in VECTORS:
        return VECTORS[head](unseal_expr(rest[0]))
    if head == "Undefined":
        return sp.Function(_text(rest[0]))(*map(unseal_expr, rest[1:]))
    if head not in VOCABULARY:
        raise BadInput(f"{head} is not part of the vocabulary of derivations")
    cls = VOCABULARY[head]
    args = [unseal_expr(a) for a in rest]
    unevaluated = cls in _UNEVALUATED or issubclass(cls, sp.core.relational.Relational)
    try:
        return cls(*args, evaluate=False) if unevaluated else cls(*args)
    except Exception as error:  # noqa: BLE001 - SymPy refusing the data is the data's fault
        # (review round 59: an entry with no index, built past SymPy's check, was sealed)
        raise BadInput(f"SymPy cannot build {head} of {', '.join(map(str, args))}: "
                       f"{type(error).__name__}: {error}") from error


def _text(value) -> str:
    """A string from a derivation file, with anything that would act on a terminal or in XML
    written out (see text.printable)."""
    if not isinstance(value, str):
        raise BadInput(f"expected a name, got {printable(repr(value))}")
    return printable(value)


def _flags(value) -> dict:
    if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
        raise BadInput(f"expected symbol assumptions, got {value!r}")
    return value


# ---- models ------------------------------------------------------------------------------

def seal_model(model: Any) -> dict:
    """A model by its built-in name, or as data when it is one of the model classes."""
    if isinstance(model, str):
        return {"builtin": model}
    if type(model) is LatentLinearModel:
        for latent in model.latents:
            if type(latent) is not Latent or latent.family not in FAMILIES:
                raise BadInput(f"model {model.name!r}: latent {latent!r} must be a Latent of "
                               f"one of the built-in families")
        return {"latent_linear": {
            **_model_header(model),
            "latents": [[latent.name, latent.family.name, bool(latent.shared)]
                        for latent in model.latents],
            "loadings": [[seal_expr(vector), [[str(name), seal_expr(c)]
                                              for name, c in loads.items()]]
                         for vector, loads in model.loadings.items()],
            "means": [[seal_expr(vector), seal_expr(mean)] for vector, mean in model.means.items()],
            "description": [str(line) for line in model.description]}}
    if type(model) is GaussianMatrixModel:
        return {"gaussian_matrix": {**_model_header(model), "with_means": bool(model.with_means),
                                    "independent_keys": bool(model.independent_keys),
                                    "given_query": bool(model.given_query)}}
    raise BadInput(f"model {getattr(model, 'name', model)!r} is a {type(model).__name__}: a "
                   "model must be a built-in name, a LatentLinearModel or a GaussianMatrixModel "
                   "(code of one's own is not accepted as a model)")


def _model_header(model: Model) -> dict:
    return {"name": _text(model.name), "title": _text(model.title),
            "dimension": seal_expr(model.dimension),
            "parameter_points": [[[seal_expr(k), seal_expr(v)] for k, v in point.items()]
                                 for point in model.parameter_points]}


def drawn_families(data: Any) -> tuple[str, ...] | None:
    """The families a sealed model's latents are drawn from, read off the data without
    building any expression of it (None for a model not built from latents, or data that says
    nothing readable): what the parent groups samplers by, where no file's expression may be
    built (review round 59)."""
    name = data if isinstance(data, str) else data.get("builtin") if isinstance(data, dict) \
        else None
    if isinstance(name, str):
        model = MODELS.get(name)
        return tuple(sorted({latent.family.name for latent in model.latents})) \
            if isinstance(model, LatentLinearModel) else None
    try:
        ((kind, fields),) = data.items()
        if kind == "latent_linear":
            return tuple(sorted({str(family) for _, family, _ in fields["latents"]}))
    except (AttributeError, TypeError, ValueError):
        pass
    return None


def unseal_model(data: dict) -> Model:
    """The model, the registry's own object for a built-in one.  A model that takes a built-in
    name must be that built-in model, so that no output can show a look-alike under its name."""
    if "builtin" in data:
        name = data["builtin"]
        if name not in MODELS:
            raise BadInput(f"unknown model {name!r}; known: {', '.join(MODELS)}")
        return MODELS[name]
    ((kind, fields),) = data.items()
    header = {"name": _text(fields["name"]), "title": _text(fields["title"]),
              "dimension": unseal_expr(fields["dimension"]),
              "parameter_points": [{unseal_expr(k): unseal_expr(v) for k, v in point}
                                   for point in fields["parameter_points"]]}
    families = {family.name: family for family in FAMILIES}
    if kind == "latent_linear":
        model = LatentLinearModel(
            **header,
            latents=tuple(Latent(_text(name), families[family], bool(shared))
                          for name, family, shared in fields["latents"]),
            loadings={unseal_expr(v): {_text(n): unseal_expr(c) for n, c in loads}
                      for v, loads in fields["loadings"]},
            means={unseal_expr(v): unseal_expr(m) for v, m in fields["means"]},
            description=tuple(_text(line) for line in fields["description"]))
    elif kind == "gaussian_matrix":
        model = GaussianMatrixModel(**header, with_means=bool(fields["with_means"]),
                                    independent_keys=bool(fields.get("independent_keys")),
                                    given_query=bool(fields.get("given_query")))
    else:
        raise BadInput(f"unknown kind of model {kind!r}")
    builtin = MODELS.get(model.name)
    if builtin is not None:
        if seal_model(builtin) != data:
            raise BadInput(f"a model calls itself {model.name!r} but is not the built-in model "
                           "of that name: give it a name of its own")
        return builtin
    return model


# ---- rules -------------------------------------------------------------------------------

def seal_rule(rule: Any) -> dict:
    """A rule by its registry name, a lemma or citation as data, anything else as user code."""
    if isinstance(rule, str):
        if rule not in RULES:
            raise BadInput(f"unknown rule {rule!r}; known rules: {', '.join(RULES)}, "
                           "lemma(...), cite(...)")
        return {"rule": rule}
    if is_builtin(rule):
        return {"rule": rule.name}
    if type(rule) is Lemma:
        return {"lemma": [seal_expr(rule.equation.lhs), seal_expr(rule.equation.rhs)],
                "label": _text(rule.label)}
    if type(rule) is Cite:
        return {"cite": seal(rule.derivation)}
    if isinstance(rule, Rule):
        return {"user": _printable(rule), "fact": str(getattr(rule, "fact", "") or ""),
                "latex": str(getattr(rule, "latex", "") or ""),
                "type": f"{type(rule).__module__}.{type(rule).__qualname__}"}
    raise BadInput(f"{rule!r} is not a rule: name a built-in rule, lemma(...), cite(...) or a "
                   "Rule object")


def _printable(rule: Rule) -> str:
    try:
        return str(repr(rule))
    except Exception:  # noqa: BLE001 - a user's __repr__ may raise anything
        return type(rule).__qualname__


def uses_user_code(sealed_rule: dict) -> bool:
    """Whether a sealed rule is, or (through a citation) rests on, a rule of the user's code."""
    if "user" in sealed_rule:
        return True
    if "cite" in sealed_rule:
        return any(uses_user_code(r) for step in sealed_rule["cite"]["steps"] for r in step["by"])
    return False


class UserRule(Rule):
    """Stands for a rule of the user's own code in the process that checks: it rewrites
    nothing.  Its rule check ran beside the derivation's file, and reports list it."""

    def __init__(self, sealed: dict):
        if not _PLAIN_NAME.fullmatch(sealed["user"]) \
                or sealed["user"].casefold() in {*RULES, "lemma", "cite"}:
            raise BadInput(f"a user rule is named {sealed['user']!r}: a user rule's name is a "
                           "plain name (letters, digits and _) that no built-in rule has, so "
                           "that no step reads as resting on a built-in rule, a lemma or a "
                           "citation")
        self.name = sealed["user"]
        self.fact = sealed["fact"]
        self.latex = sealed["latex"] or sealed["user"]
        self.origin = sealed["type"]

    @property
    def assumption(self) -> str:
        return f"user rule {self.name} ({self.origin}): its rule check runs the user's code"

    def rewrite(self, node, ctx):
        return None


def _unsealed_rules(step: dict, n: int) -> list[Rule]:
    try:
        return [unseal_rule(r) for r in step["by"]]
    except BadInput as error:
        raise BadInput(f"{_text(step['file'])}:{int(step['line'])}: step {n}: {error}") from None


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def unseal_rule(data: dict) -> Rule:
    if "rule" in data:
        return RULES[data["rule"]]
    if "lemma" in data:
        lhs, rhs = (unseal_expr(x) for x in data["lemma"])
        return Lemma(sp.Eq(lhs, rhs, evaluate=False), _text(data["label"]))
    if "cite" in data:
        return Cite(unseal(data["cite"]))
    if "user" in data:
        return UserRule(data)
    raise BadInput(f"not a sealed rule: {data!r}")


# ---- derivations -------------------------------------------------------------------------

_SEALING: list = []  # the derivations being sealed, citer before cited


def seal(derivation: Derivation) -> dict:
    """A derivation as JSON-ready data; bad input (BadInput) names what could not be sealed,
    a cycle of citations among them."""
    if not isinstance(derivation, Derivation):
        raise BadInput(f"{derivation!r} is not a Derivation")
    for n, citer in enumerate(_SEALING):
        if citer is derivation:
            cycle = " cites ".join(d.name for d in [*_SEALING[n:], derivation])
            raise BadInput(f"{derivation.file}:{derivation.line}: a cycle of citations: "
                           f"{cycle}; a derivation cannot rest on itself")
    _SEALING.append(derivation)
    try:
        return _sealed(derivation)
    finally:
        _SEALING.pop()


def _sealed(derivation: Derivation) -> dict:
    where = f"{derivation.file}:{derivation.line}"
    try:
        head = {
            "name": _text(derivation.name), "title": _text(derivation.title or ""),
            "notes": _text(derivation.notes or ""), "file": _text(derivation.file),
            "line": int(derivation.line),
            "claim": seal_expr(derivation.claim),
            "where": [[seal_expr(k), seal_expr(v)] for k, v in dict(derivation.where).items()],
            "distinct": [[seal_expr(x) for x in sorted(pair, key=str)]
                         for pair in derivation.distinct],
            "models": [seal_model(m) for m in derivation.models],
            "expect_refuted_at": derivation.expect_refuted_at}
    except BadInput as error:
        raise BadInput(f"{where}: {error}") from None
    steps = []
    for n, step in enumerate(derivation.steps, 1):
        try:
            steps.append({"expr": seal_expr(step.expr), "rel": step.rel,
                          "why": _text(step.why or ""), "file": _text(step.file),
                          "line": int(step.line),
                          "by": [seal_rule(r) for r in justifications(step.by)]})
        except BadInput as error:
            raise BadInput(f"{step.file}:{step.line}: step {n}: {error}") from None
    if not head["models"]:
        raise BadInput(f"{where}: models=[] names no model: a claim is checked under at least "
                       "one")
    return {**head, "steps": steps}


def unseal(data: dict) -> Derivation:
    """The derivation sealed in ``data``, rebuilt from the trusted vocabulary and registry;
    its models are Model objects, the built-in ones the registry's own."""
    claim = unseal_expr(data["claim"])
    steps = [Step(unseal_expr(s["expr"]), _unsealed_rules(s, n), _text(s["why"]),
                  rel=_text(s["rel"]), file=_text(s["file"]), line=int(s["line"]))
             for n, s in enumerate(data["steps"], 1)]
    models = [unseal_model(m) for m in data["models"]]
    derivation = Derivation(
        claim=claim, steps=steps, title=_text(data["title"]), name=_text(data["name"]),
        where={unseal_expr(k): unseal_expr(v) for k, v in data["where"]},
        distinct=[tuple(unseal_expr(x) for x in pair) for pair in data["distinct"]],
        models=models, notes=_text(data["notes"]),
        expect_refuted_at=data["expect_refuted_at"], file=_text(data["file"]),
        line=int(data["line"]))
    return derivation


def user_code_steps(data: dict) -> list[int]:
    """The (1-based) steps whose rule check needs the user's own code."""
    return [n for n, step in enumerate(data["steps"], 1)
            if any(uses_user_code(r) for r in step["by"])]
