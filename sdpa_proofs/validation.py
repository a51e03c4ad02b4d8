"""Declarations checked before any step is: what a derivation says about its names, indices and
models must be something the checks can honour, or the derivation is bad input.

Each check closes a way to change what a claim means without the checks seeing it: an
abbreviation that rewrites part of the claim (``where={d**2: d}``), a hypothesis i != j about
the indices of a sum, a symbol that prints like a built-in one but lacks its assumptions, a
parameter outside its domain.
"""

from __future__ import annotations

import sympy as sp
from sympy import Expr, Indexed, IndexedBase, Symbol

from . import expressions
from . import models as _models
from . import symbols as _symbols
from .declarations import conditions, unreadable_declarations
from .derivation import Derivation, justifications
from .domains import divisors, nonzero_conditions, nonzero_divisors
from .errors import BadInput
from .expressions import (
    BINDERS,
    MOMENT_FUNCTIONS,
    NOT_DIFFERENTIABLE,
    MaxOver,
    SumOverDistinct,
    bound_indices,
    index_symbols,
    is_random_coordinate,
    unfold,
)
from .models import GaussianMatrixModel, LatentLinearModel, Model
from .realnumbers import (
    PRECISIONS,
    MisjudgedNumber,
    NoEnclosure,
    enclosure,
    proven_sign,
    put_in,
)
from .rules import Lemma
from .text import show

#: every name the toolkit gives a meaning: a symbol printed like one of these must be it
LIBRARY = {str(value.label if isinstance(value, IndexedBase) else value): value
           for module in (_symbols, _models) for value in vars(module).values()
           if type(value) is Symbol or isinstance(value, IndexedBase)}
#: the library's own abbreviation names, which ``where`` may define
ABBREVIATIONS = {_symbols.S, _symbols.S_tilde, _symbols.P, _symbols.p}
#: the abbreviations that are symbols, and where= that gives each its meaning: undefined, one
#: would be a real number that nothing fixes (E[S q_2 k_2] read as S E[q_2 k_2])
ABBREVIATED = {_symbols.S: "where={S: dot_product}",
               _symbols.S_tilde: "where={S_tilde: other_dot_product}",
               _symbols.P: "where=softmax_abbreviations"}


def validate(derivation: Derivation, models: list[Model]) -> None:
    """Raise BadInput, naming file, line and what to change, for a declaration that the checks
    could not honour."""
    at = f"{derivation.file}:{derivation.line}"
    if not models:
        raise BadInput(f"{at}: no model: a claim is checked under at least one")
    _plain_label(at, "derivation", derivation.name)
    names = [m.name for m in models]
    for name in dict.fromkeys(names):
        _plain_label(at, "model", name)
    for name in names:
        if names.count(name) > 1 and len({id(m) for m in models if m.name == name}) > 1:
            raise BadInput(f"{at}: two different models are called {name}: name them apart")
    try:
        for key in derivation.where:
            unfold(key, derivation.where)
    except BadInput as error:
        raise BadInput(f"{at}: where: {error}") from None
    _abbreviations(derivation, models, at)  # before anything is unfolded
    places = _places(derivation) + _model_places(models)
    _no_dummies(places)
    _names_are_unique(places)
    _no_symbol_prints_like_an_entry(places)
    _no_symbol_prints_like_a_constant(places)
    _declarations_read_as_conditions(derivation, models)
    given = {m.dimension for m in models} | {s for m in models for point in m.parameter_points
                                              for s in point}
    for place, expr in places:
        _no_look_alikes(place, expr)
        _no_shadowing(place, expr, ())
        _binds_nothing_given(place, expr, given)
        expr = unfold(expr, derivation.where)
        _no_shadowing(place, expr, ())  # an abbreviation may bring a sum inside another
        _no_capture(place, expr)
        _ranges_make_sense(place, expr)
        _vectors_are_only_real(place, expr)
        _constructs_the_checks_know(place, expr)
    _hypotheses(derivation, at)
    _indices_are_no_numbers(derivation, models, at)
    for model in models:
        try:
            parameter_domains(model)
        except BadInput as error:  # the model may be the file's own: say which file uses it
            raise BadInput(f"{at}: {error}") from None


def _places(derivation: Derivation, distinct: bool = True) -> list[tuple[str, Expr]]:
    at = f"{derivation.file}:{derivation.line}"
    places = [(f"{at}: claim", side) for side in (derivation.claim.lhs, derivation.claim.rhs)]
    places += [(f"{at}: where", x) for item in derivation.where.items() for x in item]
    if distinct:
        places += [(f"{at}: distinct", x) for pair in derivation.distinct for x in pair]
    places += [(f"{step.file}:{step.line}: step {n}", step.expr)
               for n, step in enumerate(derivation.steps, 1)]
    # a lemma's equation is established by the exact engine and then rewrites steps: it is
    # held to what a step is
    places += [(f"{step.file}:{step.line}: step {n}: lemma", side)
               for n, step, equation in _lemmas(derivation)
               for side in (equation.lhs, equation.rhs)]
    return places


def _lemmas(derivation: Derivation) -> list[tuple[int, object, Expr]]:
    """(step number, step, equation) for every lemma the steps name."""
    return [(n, step, rule.equation) for n, step in enumerate(derivation.steps, 1)
            for rule in justifications(step.by) if isinstance(rule, Lemma)]


def _model_places(models: list[Model], points: bool = True) -> list[tuple[str, Expr]]:
    """The expressions of the models the user defined: loadings, means, and the parameters
    their points name (a general Gaussian model's covariance_pattern, which no law holds)."""
    places = []
    for model in models:
        if _models.MODELS.get(model.name) is model:
            continue
        at = f"model {model.name}"
        exprs = [model.dimension] + ([x for point in model.parameter_points for x in point]
                                     if points else [])
        if isinstance(model, LatentLinearModel):
            exprs += [sp.sympify(c) for loads in model.loadings.values() for c in loads.values()]
            exprs += [sp.sympify(m) for m in model.means.values()] + list(model.loadings)
        places += [(at, x) for x in exprs]
    return places


def _no_dummies(places: list[tuple[str, Expr]]) -> None:
    """Dummies are the toolkit's own: it renames bound indices apart and stands in for values
    with them.  A user's Dummy prints like a symbol it is not (Dummy("sigma_q") as the built-in
    sigma_q) and, sealed with its dummy_index, could be one of the checks' own."""
    for place, expr in places:
        dummies = sorted(expr.atoms(sp.Dummy), key=str)
        if dummies:
            raise BadInput(f"{place}: Dummy({dummies[0].name!r}) is a sympy Dummy, which the "
                           "toolkit keeps for names of its own: use Symbol")


def user_parameters(derivation: Derivation, models: list[Model]) -> list[Symbol]:
    """The symbols a claim is about for all their values (a scale c, a loading a of the user's
    model, the library's s where no model gives it a value): not a parameter of a built-in
    model (whose meaning its description states), not an index, not a dimension, not an
    abbreviation's name.  Their declared assumptions are conditions on the claim."""
    found: set = set()
    for _, expr in _places(derivation) + _model_places(models, points=False):
        if isinstance(expr, IndexedBase):
            continue
        expr = unfold(expr, derivation.where)
        # an index where it is one: a lemma that binds t or reads δ(c, t) hides no condition
        # that t or c puts on the claim elsewhere (review round 90)
        indices = index_symbols(expr) | {x for b in expr.atoms(*BINDERS)
                                         for x in bound_indices(b)}
        found |= expr.atoms(Symbol) - indices - {x.base.label for x in expr.atoms(Indexed)}
    described = {x for m in models if _models.MODELS.get(m.name) is m
                 for point in m.parameter_points for x in point}
    fixed = described | {x for pair in derivation.distinct for x in pair} | \
        {m.dimension for m in models} | set(derivation.where)
    return sorted((x for x in found - fixed if type(x) is Symbol), key=str)


def claim_conditions(derivation: Derivation, models: list[Model]) -> list[Expr]:
    """What the parameters' declarations say of the claim, then where its expressions, its
    proof's and its models' have a value, as every report shows them: c > 0, c != 2."""
    declared = [c for x in user_parameters(derivation, models) for c in conditions(x)]
    return declared + nonzero_divisors(claim_expressions(derivation, models))


def conditions_as_written(derivation: Derivation, models: list[Model]) -> list[Expr]:
    """claim_conditions, and each divisor that holds a moment as it stands (Var(q_1) != 0):
    what a document states of a claim that no check has seen, where the models' values of
    the moments (a^2 for Var(q_1) = a^2) are not known."""
    found = claim_conditions(derivation, models)
    moments = nonzero_conditions(divisors(claim_expressions(derivation, models), moments=True))
    return found + [c for c in moments if c not in found]


def claim_expressions(derivation: Derivation, models: list[Model]) -> list[Expr]:
    """What the claim and its proof are made of, abbreviations unfolded: its sides, where,
    steps and lemmas, and the loadings and means of the user's models."""
    places = _places(derivation, distinct=False) + _model_places(models, points=False)
    return [unfold(expr, derivation.where) for _, expr in places
            if not isinstance(expr, IndexedBase)]


def _declarations_read_as_conditions(derivation: Derivation, models: list[Model]) -> None:
    """Each declaration of a parameter of the user's is shown beside the claim as a condition
    (declarations.conditions); one that reads as none is bad input: Symbol("x", zero=True)
    made Var(x S) = 0 verified, shown as a claim about every x (review round 85)."""
    at = f"{derivation.file}:{derivation.line}"
    for symbol in user_parameters(derivation, models):
        unreadable = unreadable_declarations(symbol)
        if unreadable:
            raise BadInput(f"{at}: the symbol {show(symbol)} is {', '.join(unreadable)}: declare "
                           "a parameter real, with at most a sign (positive, negative, "
                           "nonnegative, nonpositive, nonzero) and integer or rational; these "
                           "show beside the claim as conditions (a number is written as the "
                           "number)")


def _plain_label(at: str, kind: str, name: str) -> None:
    """A derivation's or model's name heads rows of the report: a Cyrillic a, a Unicode hyphen
    or a space at its end would show two different things as one."""
    if not (name and name.isascii() and name.isprintable() and name == name.strip()):
        raise BadInput(f"{at}: the {kind} name {name!r} is not plain ASCII (letters, digits, "
                       "signs, inner spaces): it could print like another name; pass "
                       "name=... (a derivation is named after its file unless it says)")


def _names_are_unique(places: list[tuple[str, Expr]]) -> None:
    """Two different symbols (or vectors) that print alike would make the claim shown differ
    from the claim checked: Symbol("a", positive=True) and Symbol("a", nonpositive=True)."""
    found = [(thing, place) for place, expr in places
             for thing in ({expr} if isinstance(expr, IndexedBase) else set())
             | set(expr.atoms(Symbol)) | {x.base for x in expr.atoms(Indexed)}]
    labels = {thing.label for thing, _ in found if isinstance(thing, IndexedBase)}
    seen: dict[str, tuple[object, str]] = {}
    for thing, place in found:
        if thing in labels:
            continue
        for printed in _printed(thing.label if isinstance(thing, IndexedBase) else thing):
            other = seen.setdefault(printed, (thing, place))
            if other[0] != thing:
                raise BadInput(f"{place}: two different symbols print as {printed} (here and "
                               f"at {other[1]}): give them different names")


def _printed(x: Expr) -> tuple[str, str]:
    """How x prints in the terminal and how it is typeset: a name must be told apart in both."""
    return show(x), sp.latex(x)


def _latin_looking(symbol: Symbol) -> bool:
    """Whether SymPy typesets the symbol as a Latin letter it is not named: omicron as o, Rho as
    P, Kappa as K (Greek capitals that are Latin glyphs)."""
    form = sp.latex(symbol).removeprefix("\\mathrm{").removesuffix("}")
    return len(form) == 1 and form.isascii() and form.isalpha() and symbol.name != form


def _no_symbol_prints_like_an_entry(places: list[tuple[str, Expr]]) -> None:
    """A plain symbol must not print like a coordinate or an entry (Symbol("q_1") reads as the
    random coordinate q_1) nor like a built-in symbol written another way (Symbol("σ_q"))."""
    labels = {x.label for x in LIBRARY.values() if isinstance(x, IndexedBase)}
    for _, expr in places:
        labels |= {x.base.label for x in expr.atoms(Indexed)}
    vectors = {form for label in labels for form in _printed(label)}
    printed_builtins = {show(x): x for x in LIBRARY.values() if type(x) is Symbol}
    for place, expr in places:
        for symbol in expr.atoms(Symbol):
            if symbol in printed_builtins.values() or any(
                    symbol == x.base.label for x in expr.atoms(Indexed)):
                continue  # the toolkit's own (p_max) and the labels of vectors
            printed = show(symbol)
            twin = printed_builtins.get(printed)
            if _latin_looking(symbol):
                raise BadInput(f"{place}: the symbol {symbol.name} is typeset as the letter "
                               f"{sp.latex(symbol)}, which it is not: choose another name")
            # Symbol("q1") prints as q₁ and is typeset q_{1}: the coordinate's look
            if twin is not None and twin != symbol or any(
                    form.startswith((f"{v}_", f"{v}[")) or form.removeprefix(v).isdigit()
                    for v in vectors for form in (*_printed(symbol), symbol.name)):
                like = f"the built-in {printed}" if twin is not None else "a coordinate or entry"
                raise BadInput(f"{place}: the symbol {printed} prints like {like}: choose "
                               "another name")


def _no_symbol_prints_like_a_constant(places: list[tuple[str, Expr]]) -> None:
    """A symbol must not print like a number SymPy names: Symbol("e") beside Euler's e made
    e^2 + e >= 2 read as a claim about one e (review round 82), and an integer e read as
    Euler's makes e^2 - 5e + 6 >= 0 read false.  e and pi are refused always (exp(2) prints
    e^2); gamma, phi, G and i where their numbers appear."""
    constants = {sp.E, sp.pi} | {c for _, expr in places
                                 for c in expr.atoms(sp.NumberSymbol, type(sp.I))}
    printed = {form for c in constants for form in (*_printed(c), show(Symbol(str(c))))}
    for place, expr in places:
        for symbol in expr.atoms(Symbol):
            if symbol in LIBRARY.values():
                continue
            if set(_printed(symbol)) & printed:
                raise BadInput(f"{place}: the symbol {show(symbol)} prints like the number "
                               f"{sp.latex(symbol)} that SymPy names: choose another name")


def _no_look_alikes(place: str, expr: Expr) -> None:
    """A symbol or vector named like a built-in one must be the built-in one: Symbol('sigma_q')
    without positivity would print as σ_q and mean something else."""
    named = set(expr.atoms(Symbol)) | {x.base for x in expr.atoms(Indexed)}
    for thing in named:
        name = str(thing.label if isinstance(thing, IndexedBase) else thing)
        if not (name.isidentifier() and name.isascii()):  # Cyrillic а prints as a
            raise BadInput(f"{place}: the name {name!r} is not a plain name (ASCII letters, "
                           "digits and _, not starting with a digit): it could print like an "
                           "expression or another name")
        if name.startswith("_"):
            raise BadInput(f"{place}: the name {name} starts with _, which the toolkit keeps for "
                           "names of its own: choose another")
        builtin = LIBRARY.get(name)
        if builtin is None or thing == builtin:
            continue
        if isinstance(builtin, IndexedBase) and isinstance(thing, Symbol) and thing == \
                builtin.label:
            continue  # the label of a built-in vector
        raise BadInput(f"{place}: {name} prints like the built-in {name} but is a different "
                       f"{type(thing).__name__} (other assumptions or kind): import {name} from "
                       "sdpa_proofs, or choose another name")


def _no_shadowing(place: str, expr: Expr, bound: tuple) -> None:
    """No sum (or max) binds an index that an enclosing one binds already."""
    if isinstance(expr, BINDERS):
        inner = bound_indices(expr)
        again = [x for x in inner if x in bound]
        if again or len(set(inner)) < len(inner):
            name = again[0] if again else inner[0]
            raise BadInput(f"{place}: the index {name} is bound twice in {show(expr)}: rename "
                           "the inner index")
        bound = bound + tuple(inner)
    for arg in expr.args:
        _no_shadowing(place, arg, bound)


def _binds_nothing_given(place: str, expr: Expr, given: set) -> None:
    """No sum or maximum binds a symbol the checks give values: a model's dimension or a
    parameter (sum_{d=1}^{3} d is 6, but d put in as 1 made it sum over 1 = 1..3 and crashed
    the check; review round 54)."""
    for binder in expr.atoms(*BINDERS):
        for index in bound_indices(binder):
            if index in given:
                raise BadInput(f"{place}: {show(binder)} binds {index}, which the model gives "
                               "values (its dimension or a parameter): rename the index")


def _no_capture(place: str, expr: Expr) -> None:
    """No sum binds a name that the same expression uses free: a rule that substitutes the free
    one (sifting delta_{lj} puts j for l) would land inside the sum and be captured."""
    free = expr.free_symbols
    for binder in expr.atoms(*BINDERS):
        for index in bound_indices(binder):
            if index in free:
                raise BadInput(f"{place}: {index} is free in {show(expr)} and also the index of "
                               f"{show(binder)}: rename the index of the sum")


#: what a bound index may be declared beyond integer, with what its range must then show
_INDEX_ASSUMPTIONS = {"positive": lambda lo, hi: (lo - 1).is_nonnegative,
                      "nonnegative": lambda lo, hi: lo.is_nonnegative,
                      "negative": lambda lo, hi: (hi + 1).is_nonpositive,
                      "nonpositive": lambda lo, hi: hi.is_nonpositive}


def _ranges_make_sense(place: str, expr: Expr) -> None:
    """Every sum and maximum runs forwards over integers its index may take: a range that may
    run backwards means minus the gap to SymPy (Karr's convention) but nothing to a reader; a
    maximum needs at least one value; and an index declared positive cannot run over -d..0."""
    for binder in expr.atoms(*BINDERS):
        if isinstance(binder, SumOverDistinct):
            limits = [(x, sp.S.One, binder.upper) for x in binder.indices]
        else:
            limits = binder.limits
        for index, lower, upper in limits:
            empty_allowed = not isinstance(binder, MaxOver)
            if not (upper - lower + (1 if empty_allowed else 0)).is_nonnegative:
                raise BadInput(f"{place}: {show(binder)} runs over {show(lower)}..{show(upper)}, "
                               "which may run backwards" + ("" if empty_allowed else
                                                            " or be empty: a maximum needs "
                                                            "at least one value"))
            _index_fits_range(place, index, lower, upper)


def _index_fits_range(place: str, index: Symbol, lower: Expr, upper: Expr) -> None:
    """A bound index is declared integer and at most one sign (positive, nonnegative, negative
    or nonpositive), which its range must show; any other declaration (negative=False, nonzero,
    extended_nonnegative, even) would tell SymPy what the range does not."""
    declared = {k: v for k, v in index._assumptions_orig.items() if k != "commutative"}
    signs = [k for k, v in declared.items() if k in _INDEX_ASSUMPTIONS and v is True]
    if declared.get("integer") is not True or len(signs) > 1 or \
            set(declared) - {"integer", *signs}:
        raise BadInput(f"{place}: declare the index {index} of a sum as "
                       f"Symbol({str(index)!r}, integer=True), with at most one of positive, "
                       "nonnegative, negative or nonpositive (its range must show it)")
    for name in signs:
        if not _INDEX_ASSUMPTIONS[name](lower, upper):
            raise BadInput(f"{place}: the index {index} is declared {name} but runs over "
                           f"{show(lower)}..{show(upper)}")


def _vectors_are_only_real(place: str, expr: Expr) -> None:
    """A random vector's coordinates are what its model says: declared real, nothing more (a
    vector declared positive would let SymPy turn sqrt(v_1^2) into v_1 under a normal law)."""
    for vector in {x.base for x in expr.atoms(Indexed) if is_random_coordinate(x)}:
        extra = {k for k, v in vector.label._assumptions_orig.items()
                 if k not in ("real", "commutative") and v is not None}
        if extra:
            raise BadInput(f"{place}: the random vector {vector} is declared "
                           f"{', '.join(sorted(extra))}: declare it real only; its law is the "
                           "model's to give")


def _abbreviations(derivation: Derivation, models: list[Model], at: str) -> None:
    """``where`` keys are fresh names: a symbol or p[l] pattern that nothing else gives a
    meaning, never an expression, a built-in or model symbol, and never an index that a sum
    binds (unfolding would rename the index, and capture what the abbreviation stands for)."""
    taken = {x for m in models for x in _model_symbols(m)}
    bound = {v for _, expr in _places(derivation)
             for binder in sp.sympify(expr).atoms(*BINDERS) for v in bound_indices(binder)}
    for key in derivation.where:
        fresh = type(key) is Symbol or (
            isinstance(key, Indexed) and type(key.base) is IndexedBase
            and all(type(i) is Symbol for i in key.indices))
        name = key.base if isinstance(key, Indexed) else key
        if not fresh:
            raise BadInput(f"{at}: where={{{show(key)}: ...}}: an abbreviation must be a fresh "
                           "name (a Symbol, or p[l] for an indexed one), not an expression")
        if name in bound:
            raise BadInput(f"{at}: where={{{show(key)}: ...}}: {show(name)} is an index that a "
                           "sum or maximum binds; an abbreviation must be a fresh name")
        free = sorted((x for x in index_symbols(derivation.where[key])
                       if x.is_Symbol and x not in getattr(key, "indices", ())), key=str)
        if free:
            raise BadInput(f"{at}: where={{{show(key)}: ...}}: the value depends on the index "
                           f"{', '.join(map(str, free))}, which {show(key)} does not show: "
                           f"write it as a pattern, {show(key)}[{free[0]}]")
        if key not in ABBREVIATIONS and name not in ABBREVIATIONS and (
                str(name) in LIBRARY or name in taken):
            raise BadInput(f"{at}: where={{{show(key)}: ...}}: {show(name)} already means "
                           "something (a built-in or model symbol): abbreviate with a new name")
    for place, expr in _places(derivation):  # p_i undefined is fits_model's to name
        for name in sorted(set(ABBREVIATED) & expr.atoms(Symbol) - set(derivation.where),
                           key=str):
            raise BadInput(f"{place}: {show(name)} is the library's abbreviation, which this "
                           f"derivation does not define: pass {ABBREVIATED[name]}, or name "
                           "your symbol otherwise")


def _constructs_the_checks_know(place: str, expr: Expr) -> None:
    """What some check would read otherwise than the others, refused: a function nothing
    defines, a derivative other than in a coordinate or of a symbolic order (d/d sigma_q
    E[q_1^2] looks like 0 to algebra, which sees no sigma_q inside E), a derivative of a
    maximum or minimum (not differentiable where its arguments tie, and SymPy's rule counts
    every tie as a half: d/dz max(f, f, f) came out 3/2 f'), and a Kronecker delta with a
    range (SymPy's delta_{i,j,(1,3)}, whose range the sifting rules do not keep)."""
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.core.function.AppliedUndef):
            raise BadInput(f"{place}: {show(node)} is a function nothing defines")
        if isinstance(node, sp.Derivative):
            for variable, count in node.variable_count:
                if not is_random_coordinate(variable) or not count.is_Integer:
                    raise BadInput(f"{place}: {show(node)}: derivatives are taken in a "
                                   "coordinate (z_j, q_i), a whole number of times")
            if node.expr.has(*NOT_DIFFERENTIABLE):
                raise BadInput(f"{place}: {show(node)}: a maximum, a minimum or an "
                               "absolute value is not differentiable where its arguments tie "
                               "(nor sign, floor or a step where it jumps); differentiate the "
                               "branch that holds instead")
        if isinstance(node, sp.KroneckerDelta) and len(node.args) > 2:
            raise BadInput(f"{place}: {show(node)}: a Kronecker delta with a range; write the "
                           "range as a sum's limits instead")
        if node in (sp.oo, -sp.oo, sp.zoo, sp.nan):  # Var(q_1 + oo) is SymPy's Var(oo)
            raise BadInput(f"{place}: {show(node)} is no real number: the checks weigh finite "
                           "values only (a limit is Lim(X_n, n), not a value at infinity)")
        if isinstance(node, sp.KroneckerDelta) and _not_of_indices(node):
            raise BadInput(f"{place}: {show(node)}: a Kronecker delta compares indices "
                           "(integers, index symbols, the dimension); a coordinate, an entry or "
                           "a moment in it is no index")


def _not_of_indices(delta: sp.KroneckerDelta) -> bool:
    return any(a.has(sp.Indexed, *MOMENT_FUNCTIONS) for a in delta.args)


def _model_symbols(model: Model) -> set:
    found = {model.dimension}
    for point in model.parameter_points:
        found |= set(point)
    found |= set(model.vectors)
    return found


def _declared(symbol: Symbol) -> dict:
    """The assumptions a symbol was declared with (commutative goes without saying)."""
    return {k: v for k, v in symbol._assumptions_orig.items() if k != "commutative"}


def _statement(derivation: Derivation) -> tuple[list[Expr], list[Expr]]:
    """The claim's sides and the steps, then the lemmas' sides, abbreviations unfolded."""
    exprs = [derivation.claim.lhs, derivation.claim.rhs] + [s.expr for s in derivation.steps]
    lemmas = [side for _, _, equation in _lemmas(derivation)
              for side in (equation.lhs, equation.rhs)]
    return ([unfold(e, derivation.where) for e in exprs],
            [unfold(e, derivation.where) for e in lemmas])


def _indices_are_no_numbers(derivation: Derivation, models: list[Model], at: str) -> None:
    """A free index names a coordinate, in 1..dimension, and so the checks take it; standing
    also as a number (a Sum_i delta(i, a) = a), it reads as a parameter, any positive integer,
    and the claim, true only for a <= d, was shown for every a (review round 94).  The sizes
    are both (q_d is the last coordinate).  The user's models count: E[q_1] = a where a is
    the mean of q (review round 95)."""
    exprs, lemmas = _statement(derivation)
    sizes = {*_symbols.SIZES, *(m.dimension for m in models)}
    indices = set().union(*(index_symbols(e) for e in exprs + lemmas)) - sizes
    # a model's loadings, means and points make a symbol a parameter too (review round 95)
    places = [(show(x), x) for x in exprs + lemmas] + [
        (f"{place} ({show(x)})", x) for place, x in _model_places(models)
        if not isinstance(x, IndexedBase)]
    for place, expr in places:
        bare = expr.replace(lambda e: isinstance(e, Indexed | sp.KroneckerDelta),
                            lambda e: sp.Dummy())
        both = bare.free_symbols & indices
        if both:
            index = min(both, key=str)
            raise BadInput(f"{at}: {index} is a free index (it names a coordinate, 1..dimension)"
                           f" and also stands as a number in {place}: the checks would "
                           f"take it for a coordinate and the claim would read as one about "
                           f"every {index}; use one symbol for each")


def _hypotheses(derivation: Derivation, at: str) -> None:
    """``distinct`` pairs name two different free indices of the statement: never an index a
    sum binds, where "i != j" would drop the diagonal of the sum.  A free index names some
    coordinate, 1..dimension, so it must be a positive integer symbol."""
    exprs, lemmas = _statement(derivation)
    free = set().union(*(index_symbols(e) for e in exprs))
    # a lemma's free indices too: δ(c, t) there made a real c an index, and an index's
    # declaration is no condition of the claim (review round 90)
    for index in sorted(free.union(*(index_symbols(e) for e in lemmas)), key=str):
        if index.is_Integer or isinstance(index, sp.Dummy):
            continue
        if not isinstance(index, Symbol):  # q_1 inside a Kronecker delta
            raise BadInput(f"{at}: {show(index)} stands where an index belongs (a Kronecker "
                           "delta compares indices)")
        if _declared(index) != {"integer": True, "positive": True}:
            raise BadInput(f"{at}: the free index {index} names a coordinate (1..dimension): "
                           "declare it Symbol(..., integer=True, positive=True) and nothing "
                           "more")
    bound = {x for e in exprs for b in e.atoms(*BINDERS) for x in bound_indices(b)}
    for pair in derivation.distinct:
        if len(pair) != 2 or not all(type(x) is Symbol and x.is_integer for x in pair):
            raise BadInput(f"{at}: distinct={sorted(map(str, pair))}: a hypothesis i != j "
                           "names two different integer index symbols")
        for index in pair:
            if index in bound:
                raise BadInput(f"{at}: distinct names {index}, which a sum in the derivation "
                               "binds: i != j is a hypothesis about free indices only (use "
                               "SumOverDistinct for a sum over i != j)")
            if index not in free:
                raise BadInput(f"{at}: distinct names {index}, which is not a free index of "
                               "the statement")


def parameter_domains(model: Model) -> None:
    """Every parameter point respects its symbols' assumptions (a positive scale is > 0, a
    correlation lies in [-1, 1]) and gives the model real, finite loadings and positive
    variances."""
    if not model.parameter_points:
        raise BadInput(f"model {model.name}: no parameter points to evaluate at")
    # and nothing more: an even or prime dimension lets SymPy rewrite what the file builds
    # (2 floor(D/2) as D) by a fact no output shows
    if not (type(model.dimension) is Symbol and _declared(model.dimension)
            == {"integer": True, "positive": True}):
        raise BadInput(f"model {model.name}: its dimension {model.dimension} must be a "
                       "Symbol(..., integer=True, positive=True) and nothing more")
    for point in model.parameter_points:
        for symbol, value in point.items():
            value = sp.sympify(value)
            if symbol == model.dimension or not isinstance(symbol, Symbol):
                raise BadInput(f"model {model.name}: a parameter point gives {symbol} a value; "
                               "only parameters take values there (the checks choose d)")
            sign = _proven_sign_of(model, symbol, value)
            for assumption, expected in sorted(symbol.assumptions0.items(),
                                               key=lambda a: (a[0].startswith("extended"), a)):
                actual = _SIGNS[assumption](sign) if assumption in _SIGNS \
                    else getattr(value, f"is_{assumption}", None)
                if actual is not None and actual != expected:
                    raise BadInput(f"model {model.name}: {symbol} = {value}, but {symbol} is "
                                   f"declared {'' if expected else 'not '}{assumption}")
            if _models.is_correlation(symbol) and not (proven_sign(value + 1) in (0, 1)
                                             and proven_sign(1 - value) in (0, 1)):
                raise BadInput(f"model {model.name}: a correlation rho = {value} not shown to "
                               "lie in [-1, 1]")
        if isinstance(model, LatentLinearModel):
            _latent_linear_domain(model, point)
        elif isinstance(model, GaussianMatrixModel):
            pattern = point.get(_models.covariance_pattern)
            if pattern is None or not (sp.sympify(pattern).is_Integer and pattern >= 0):
                raise BadInput(f"model {model.name}: each parameter point names a covariance "
                               "pattern, a whole number from 0 (covariance_pattern: 0)")


def _proven_sign_of(model: Model, symbol: Symbol, value: Expr) -> int:
    """The sign of a parameter's value, proven (SymPy's is_positive holds
    1 + 10^101 sin(log(cos(10^-50))), about -4, positive; review round 50); bad input where
    the value is no real number, or its sign cannot be told."""
    if not value.is_number or value.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        raise BadInput(f"model {model.name}: {symbol} = {value} is not a real number")
    sign = proven_sign(value)
    if sign is None:
        raise BadInput(f"model {model.name}: {symbol} = {value}: not shown to be a real "
                       "number of known sign (write it with rationals, roots, pi, exp, log...)")
    return sign


# sign assumptions, judged by the proven sign
_SIGNS = {"positive": lambda s: s > 0, "negative": lambda s: s < 0, "zero": lambda s: s == 0,
          "nonzero": lambda s: s != 0, "nonnegative": lambda s: s >= 0,
          "nonpositive": lambda s: s <= 0, "extended_positive": lambda s: s > 0,
          "extended_negative": lambda s: s < 0, "extended_nonnegative": lambda s: s >= 0,
          "extended_nonpositive": lambda s: s <= 0, "extended_nonzero": lambda s: s != 0}


def _latent_linear_domain(model: LatentLinearModel, point: dict) -> None:
    """The model's structure (vectors, latents it loads on) and its values at ``point``."""
    names = [latent.name for latent in model.latents]
    if len(set(names)) < len(names):
        raise BadInput(f"model {model.name}: two latents share a name")
    for vector, loads in model.loadings.items():
        if not isinstance(vector, expressions.RandomVector):
            raise BadInput(f"model {model.name}: {vector} is not a RandomVector")
        unknown = sorted(set(loads) - set(names))
        if unknown:
            raise BadInput(f"model {model.name}: {vector} loads on {', '.join(unknown)}, which "
                           f"is not among its latents ({', '.join(names)})")
    for vector in model.means:
        if vector not in model.loadings:
            raise BadInput(f"model {model.name}: a mean for {vector}, which has no loadings")
    for vector, loads in model.loadings.items():
        signs = [_loading_sign(model, vector, c, point) for c in loads.values()]
        _loading_sign(model, vector, model.means.get(vector, 0), point)
        if not any(sign in (1, -1) for sign in signs):
            raise BadInput(f"model {model.name}: at {_point(point)} the coordinates of {vector} "
                           "have variance 0 (no loading is shown to be nonzero)")


def _loading_sign(model: LatentLinearModel, vector, loading, point: dict) -> int | None:
    """The proven sign of a loading or mean at a parameter point; bad input where it is no
    real number there (sqrt(a) at a < 0), or where putting the point in makes a number SymPy
    misjudges."""
    if model.dimension in sp.sympify(loading).free_symbols:
        raise BadInput(f"model {model.name}: the coordinates of {vector} load {show(loading)}, "
                       f"which depends on the dimension {model.dimension}: a loading or mean is "
                       "a number or a parameter's function (scale a claim by d instead: "
                       "S/sqrt(d) is q·k/sqrt(d))")
    try:
        value = put_in(sp.sympify(loading), point)
        if not value.is_number or value.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
            raise NoEnclosure(f"{value} is not a number")
        enclosure(value, PRECISIONS[0])  # a real number, or NoEnclosure says why not
        return proven_sign(value)
    except (NoEnclosure, MisjudgedNumber) as error:
        where = f"at {_point(point)} " if point else ""
        raise BadInput(f"model {model.name}: {where}the coordinates of {vector} load "
                       f"{show(loading)}, not a real number (none shown: {error})") from None


def _point(point: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items())


def fits_model(derivation: Derivation, model: Model) -> None:
    """Bad input that would otherwise surface as an undecided check: a random vector the model
    has no law for, a coordinate with other than one index, a sum over a vector's coordinates
    that does not run over 1..dimension."""
    where = derivation.where
    places = [(f"{derivation.file}:{derivation.line}: claim", e)
              for e in (derivation.claim.lhs, derivation.claim.rhs)]
    places += [(f"{step.file}:{step.line}: step {n}", step.expr)
               for n, step in enumerate(derivation.steps, 1)]
    for place, expr in places:
        expr = unfold(sp.sympify(expr), where)
        for coordinate in sorted(expr.atoms(Indexed), key=sp.default_sort_key):
            _coordinate_fits(place, coordinate, model)
        for total in expr.atoms(sp.Sum, SumOverDistinct, MaxOver):
            _integer_limits(place, total)
        for total in expr.atoms(sp.Sum, SumOverDistinct, MaxOver):
            _range_fits(place, total, model)


def _integer_limits(place: str, binder: Expr) -> None:
    """Sums and maxima run between integers: Σ_{i=1}^{n/2} 1 is n/2 only for even n."""
    ends = [binder.upper] if isinstance(binder, SumOverDistinct) else \
        [end for _, lower, upper in binder.limits for end in (lower, upper)]
    for end in ends:
        if not end.is_integer:
            raise BadInput(f"{place}: {show(binder)} runs to {show(end)}, which is not known to "
                           "be an integer (use integer symbols, or floor/ceiling)")


def _coordinate_fits(place: str, coordinate: Indexed, model: Model) -> None:
    """A coordinate (or matrix entry) is indexed by index symbols or whole numbers from 1 on:
    the engines count which indices coincide, and q_{j+3} coincides with q_i in ways they do
    not track."""
    for index in coordinate.indices:
        plain = (isinstance(index, Symbol) and index.is_integer) or \
            (index.is_Integer and index >= 1)
        if not plain:
            raise BadInput(f"{place}: {show(coordinate)} is indexed by {show(index)}: a "
                           "coordinate takes an integer index symbol or a whole number from 1 "
                           "(arithmetic on indices is not supported; name the index)")
        if index.is_Integer and (index - model.dimension).is_positive:
            raise BadInput(f"{place}: {show(coordinate)} lies beyond the dimension "
                           f"{model.dimension}")
    if not is_random_coordinate(coordinate):
        if coordinate.base not in model.indexed_parameters:
            raise BadInput(f"{place}: {show(coordinate)} is neither a coordinate of a random "
                           f"vector nor a parameter of model {model.name}; an abbreviation "
                           f"needs where={{...}} (for p_i: where=softmax_abbreviations)")
        rank = model.parameter_rank(coordinate.base)
        if len(coordinate.indices) != rank:
            raise BadInput(f"{place}: {show(coordinate)} has {len(coordinate.indices)} "
                           f"indices; {coordinate.base.label} takes {rank}")
        return
    if coordinate.base not in model.vectors:
        raise BadInput(f"{place}: model {model.name} has no law for the random vector "
                       f"{coordinate.base} (it knows {', '.join(map(str, model.vectors))})")
    if len(coordinate.indices) != 1:
        raise BadInput(f"{place}: {show(coordinate)} has {len(coordinate.indices)} indices; "
                       "coordinates of a vector take one")


def _range_fits(place: str, total: Expr, model: Model) -> None:
    """A sum or maximum over coordinates runs over 1..dimension (or concrete integers)."""
    if isinstance(total, SumOverDistinct):
        limits = [(index, sp.S.One, total.upper) for index in total.indices]
    else:
        limits = total.limits
    coordinates = [c for c in total.atoms(Indexed) if is_random_coordinate(c)]
    for index, lower, upper in limits:
        over_coordinates = any(index in c.indices for c in coordinates)
        if over_coordinates and (lower != 1 or upper != model.dimension) \
                and not (lower.is_Integer and upper.is_Integer):
            raise BadInput(f"{place}: the {'maximum' if isinstance(total, MaxOver) else 'sum'} "
                           f"over {index} runs from {lower} to {upper}, but "
                           f"under {model.name} coordinates are indexed 1..{model.dimension}")
