"""Real numbers written as SymPy expressions, enclosed by interval arithmetic (mpmath.iv, outward
rounding) at rising precision: their signs, bounds and nearest doubles are proven, not read off
SymPy's evalf, which loses digits without saying so.  evalf takes log(1 + 10^-70) to be 0, so
SymPy finds 0 <= -10^70 log(1 + 10^-70) True and 1/2 - 10^70 log(1 + 10^-70) positive; the
number is 1 - 5 10^-71.

An enclosure may be wide, never wrong; what cannot be enclosed (a function without an interval
version here, a value that may not be real) is said to be so, and a sign that no precision up
to PRECISIONS[-1] bits decides is unknown, as for a number that is 0 without being written as
0 (log 4 - 2 log 2).
"""

from __future__ import annotations

from functools import lru_cache

import mpmath
import sympy as sp
from sympy import Expr, Rational

from .errors import UnsupportedExpression

iv = mpmath.iv
PRECISIONS = (64, 256, 1024, 4096)  # bits, tried in turn: 10^1000 log(1 + 10^-1000) needs 3400
MAX_EXPONENT = 2**40  # e^x for larger x is beyond any comparison worth making here
MAX_TERMS = 10**4  # of a sum of numbers, enclosed term by term


class NoEnclosure(ValueError):
    """The number is built from something with no interval version here."""


class MaybeNotReal(NoEnclosure):
    """Part of the number may not be a real number (the logarithm of what may be <= 0)."""


def enclosure(x: Expr, prec: int) -> mpmath.ctx_iv.ivmpf:
    """A finite interval holding the real number x, computed with ``prec`` bits."""
    old = iv.prec
    iv.prec = prec
    try:
        box = _enclose(sp.sympify(x))
    finally:
        iv.prec = old
    if not (mpmath.isfinite(box.a) and mpmath.isfinite(box.b)):
        raise NoEnclosure(f"no finite enclosure of {x}")
    return box


@lru_cache(maxsize=4096)
def proven_sign(x: Expr) -> int | None:
    """The sign of the real number x (1, 0 or -1), proven: exactly for a rational, otherwise by
    an enclosure that excludes 0 (or is the point 0); None where none decides it."""
    x = sp.sympify(x)
    if x.is_Rational:
        return (x.p > 0) - (x.p < 0)
    for prec in PRECISIONS:
        try:
            box = enclosure(x, prec)
        except NoEnclosure:
            return None
        if box.a > 0:
            return 1
        if box.b < 0:
            return -1
        if box.a == 0 and box.b == 0:
            return 0
    return None


def certainly_positive(x: Expr) -> bool:
    """x > 0 is certain: proven for a number; otherwise from the symbols' assumptions and the
    proven signs of the numbers in it (see signed_stand_ins)."""
    x = sp.sympify(x)
    return proven_sign(x) == 1 if x.is_number else signed_stand_ins(x).is_positive is True


def certainly_nonzero(x: Expr) -> bool:
    """x != 0 is certain: proven for a number; otherwise as certainly_positive decides."""
    x = sp.sympify(x)
    return proven_sign(x) in (1, -1) if x.is_number else signed_stand_ins(x).is_zero is False


def signed_stand_ins(x: Expr) -> Expr:
    """x with each number in it that is not a rational replaced by an unknown that carries
    only its proven sign, so that SymPy's assumptions reason about x without evalf: SymPy
    holds q^2 (1/2 - 10^70 log(1 + 10^-70)) non-negative (the number is about -1/2)."""
    if x.is_number:
        if x.is_Rational or x.has(*_NOT_FINITE):
            return x
        return _signed_unknown(x, None)
    if not x.args:
        return x
    if isinstance(x, (sp.Add, sp.Mul)):  # the numbers among the terms as one number: 1 - c/2
        numbers = [a for a in x.args if a.is_number]
        rest = [signed_stand_ins(a) for a in x.args if not a.is_number]
        return x.func(signed_stand_ins(x.func(*numbers)), *rest)
    return x.func(*(signed_stand_ins(a) for a in x.args))


def numbers_as_unknowns(x: Expr) -> tuple[Expr, dict]:
    """x with each number in it that is not a rational replaced by an unknown that carries
    only its proven sign (equal numbers by the same unknown), and the map back: SymPy's
    simplify decides numbers by evalf, and takes sin(log(cos(10^-50))), about -5 10^-101,
    for 0, so that x (1 + it) - x simplified to 0.  In a radical of rationals
    (``is_radical_of_rationals``) each prime p under a root is an unknown w = p^(1/L) that
    knows w^L = p (``Root``; L the least common multiple of the degrees p is met with, at
    most RADICAL_POWERS, else the radical stays one unknown):
    sqrt(3)^4 is 9, sqrt 6 is sqrt 2 sqrt 3, (2^(1/4))^2 is sqrt 2, and still SymPy has no
    value of w to misjudge a sign by.  Products of roots of distinct primes are linearly
    independent over the rationals, so a radical that is 0 comes out 0: two roots taken apart
    had let a 0/0 cancel (review round 77)."""
    unknowns: dict = {}
    numbers = {node for node in _numbers_in(x) if isinstance(node, Expr)}
    radicals = {node for node in numbers if not node.is_Rational
                and is_radical_of_rationals(node)}
    # a prime under roots of degrees 23 and 19 would be w^437: such a radical stays one unknown
    degrees = _prime_degrees(radicals)
    radicals = {node for node in radicals if all(
        degrees[prime] <= RADICAL_POWERS for prime in _primes_under_roots(node))}

    def replaced(node: Expr) -> Expr:
        if node in radicals:
            return node.xreplace({atom: _in_prime_roots(atom, degrees, unknowns)
                                  for atom in node.atoms(sp.Pow) if not atom.exp.is_Integer})
        if node in numbers and not (node.is_Rational or node.has(*_NOT_FINITE)):
            if node not in unknowns:  # named after its number, which reasons then show
                unknowns[node] = _signed_unknown(node, str(node))
            return unknowns[node]
        args = [replaced(a) for a in node.args]
        if any(new is not old for new, old in zip(args, node.args)):
            return node.func(*args)  # only what changed: an Indexed rebuilt asks its
        return node                  # assumptions anew
    return replaced(x), {u: number for number, u in unknowns.items() if u != 0}


_NOT_FINITE = (sp.oo, -sp.oo, sp.zoo, sp.nan)


class Root(sp.Dummy):
    """An unknown positive w standing for r^(1/q), r a positive rational, which knows only
    w^q = r: every integer power of it is written as r^k w^m with 0 <= m < q as it is built
    (w^4 = 9 for w = sqrt 3, 1/w = w/3), so that SymPy's algebra on it is exact and never
    asks for its value."""

    def __new__(cls, radicand: Expr, degree: int, name: str, dummy_index=None):
        root = super().__new__(cls, name, dummy_index=dummy_index, positive=True)
        root.radicand, root.degree = radicand, degree
        return root

    def __getnewargs_ex__(self):
        return (self.radicand, self.degree, self.name, self.dummy_index), {}

    def _eval_power(self, exponent):
        if exponent.is_Integer and not 0 <= exponent < self.degree:
            whole, rest = divmod(int(exponent), self.degree)
            return self.radicand ** whole * self ** rest
        return None


def _prime_degrees(radicals) -> dict:
    """prime -> the least common multiple of the degrees of the roots it is under."""
    degrees: dict = {}
    for node in radicals:
        for atom in node.atoms(sp.Pow):
            if not atom.exp.is_Integer:
                for prime in _factored(atom.base):
                    degrees[prime] = sp.ilcm(degrees.get(prime, 1), atom.exp.q)
    return degrees


def _primes_under_roots(node: Expr) -> set:
    return {prime for atom in node.atoms(sp.Pow) if not atom.exp.is_Integer
            for prime in _factored(atom.base)}


def _factored(r: Expr) -> dict:
    """prime -> its exponent in the rational r (negative in the denominator)."""
    factors = dict(sp.factorint(r.p))
    for prime, power in sp.factorint(r.q).items():
        factors[prime] = factors.get(prime, 0) - power
    return factors


def _in_prime_roots(atom: sp.Pow, degrees: dict, unknowns: dict) -> Expr:
    """r^(m/q) as a product of powers of the Roots of its primes: 12^(1/2) = w_2^2 w_3 for
    w_2 = sqrt 2, w_3 = sqrt 3 (sqrt 12 is 2 sqrt 3 in SymPy already)."""
    product = sp.S.One
    for prime, power in _factored(atom.base).items():
        degree = degrees[prime]
        number = sp.Integer(prime) ** sp.Rational(1, degree)
        if number not in unknowns:
            unknowns[number] = Root(sp.Integer(prime), degree, str(number))
        product *= unknowns[number] ** (power * atom.exp * degree)
    return product


def is_radical_of_rationals(x: Expr) -> bool:
    """Whether x is built from rationals by sums, products, integer powers up to
    RADICAL_POWERS and rational powers of positive rationals (sqrt 3, 1 + sqrt 2,
    2^(1/3)/5), each root's degree at most RADICAL_POWERS and its radicand's numerator and
    denominator at most MAX_RADICAND."""
    if x.is_Rational:
        return True
    if isinstance(x, (sp.Add, sp.Mul)):
        return all(is_radical_of_rationals(a) for a in x.args)
    if isinstance(x, sp.Pow) and x.exp.is_Rational:
        if x.exp.is_Integer:
            return abs(x.exp) <= RADICAL_POWERS and is_radical_of_rationals(x.base)
        return x.base.is_Rational and x.base > 0 and x.exp.q <= RADICAL_POWERS \
            and max(x.base.p, x.base.q) <= MAX_RADICAND
    return False


RADICAL_POWERS = 24  # beyond, writing (1 + sqrt 2)^n out takes too many terms to be of use
MAX_RADICAND = 10**12  # a radicand is factored into primes; a larger one stays one unknown


def _signed_unknown(number: Expr, name: str | None) -> Expr:
    """An unknown that knows of ``number`` only its proven sign (0 itself if that is 0)."""
    sign = proven_sign(number)
    if sign == 0:
        return sp.S.Zero
    return sp.Dummy(name, **{1: {"positive": True}, -1: {"negative": True}}.get(sign, {}))


def _numbers_in(x: Expr) -> list[Expr]:
    """The expressions in x, at any depth, that are numbers, outermost first: those with no
    free symbol, including one that binds its symbols (a maximum over j = 1..1 of
    sin(log(cos(j/10^50))), which SymPy's is_number does not count and its simplify works
    out to a number it takes for 0; review round 49).  Relations count too (1 < pi)."""
    kinds = _kinds(x, frozenset())
    # outermost first: SymPy's answers depend on what it was asked before (t before log)
    return [node for node, kind in reversed(kinds.items()) if kind == 0
            and isinstance(node, (Expr, sp.core.relational.Relational))]


@lru_cache(maxsize=1024)  # numbers_as_unknowns asks again of what put_in asked
def _kinds(x: Expr, given: frozenset) -> dict:
    """Each node of x (innermost first) -> 0 if it is a number, 1 if it is one once the
    symbols ``given`` have values, 2 otherwise.  One pass: SymPy finds the free symbols anew
    for every node it is asked about."""
    kinds: dict = {}

    def walk(node) -> int:
        if node in kinds:
            return kinds[node]
        if node in given:
            kind = 1
        elif not node.args:
            kind = 0 if not node.free_symbols else 2
        else:
            kind = max(walk(a) for a in node.args)
            if kind == 2 and getattr(node, "bound_symbols", None):
                free = node.free_symbols
                kind = 0 if not free else 1 if free <= given else 2
        kinds[node] = kind
        return kind
    walk(x)
    return kinds


def misjudged_number(x: Expr) -> Expr | None:
    """A number in x, at any depth, that SymPy's assumptions take for 0, positive or negative
    where its proven sign says otherwise or says nothing, or whose value SymPy decides by
    comparing numbers (floor, sign, |.|, max, a relation) otherwise than a proof does or where
    none does; None if there is none.  SymPy then rewrites it wrongly: sin(log(cos(10^-50)))
    is about -5 10^-101, SymPy's is_zero says True, and so sigma^t is 1 to it and expand turns
    sigma^(2 + t) into sigma^2 (review round 46); exp of it is 1 and floor of it 0 as SymPy
    builds them.  x is best built as written (sympy.evaluate(False)), before SymPy decides."""
    for node in _numbers_in(x):
        if isinstance(node, _DECIDED) and node.args \
                and not all(a.is_Rational for a in node.args) \
                and not _decided_as_proven(node):
            return node
        if not isinstance(node, Expr) or node.is_Rational or node.has(*_NOT_FINITE):
            continue
        if _sign_misjudged(node):
            return node
    return None


def _said(node: Expr, fact: str) -> bool | None:
    """SymPy's assumption ``fact`` of node; None where asking fails (evalf of a sum built as
    written raises inside mpmath)."""
    try:
        return getattr(node, f"is_{fact}")
    except Exception:  # noqa: BLE001 - SymPy's own failure says nothing about the number
        return None


def _decided_as_proven(node: Expr, decided=None) -> bool:
    """Whether SymPy, building ``node`` (as written, of numbers) with evaluation, decides it
    as a proof does (``decided``: what it made of it, if made already): to the proven value
    of a floor, a sign, a Heaviside step, Kronecker's delta or a relation, to |x| = x or -x
    by x's proven sign, to the arguments of a maximum or minimum that the others are proven
    not to exceed.  A decision no proof makes counts as wrong (Mod, frac: none is made
    here)."""
    if decided is None:
        try:
            decided = node.func(*node.args)
        except Exception:  # noqa: BLE001 - a decision SymPy cannot make is no proven one
            return False
    if decided == node:
        return True  # nothing decided: what is left is enclosed where it is used
    if isinstance(node, (sp.floor, sp.ceiling, sp.sign)):
        return decided.is_Rational and _point_value(node) == decided
    if isinstance(node, (sp.Abs, sp.Heaviside, sp.KroneckerDelta, sp.core.relational.Relational)):
        return decided == _by_sign(node)
    if isinstance(node, (sp.Max, sp.Min)):
        kept = decided.args if decided.func == node.func else (decided,)
        larger = 1 if isinstance(node, sp.Max) else -1
        return all(a in node.args for a in kept) and all(
            any(proven_sign(_difference(k, a)) in (0, larger) for k in kept)
            for a in node.args if a not in kept)
    return False


def _point_value(x: Expr) -> Rational | None:
    """x's value where an enclosure pins it to a single number (a floor, a sign)."""
    for prec in PRECISIONS:
        try:
            low, high = _ends_of(enclosure(x, prec))
        except NoEnclosure:
            return None
        if low == high:
            return _rational(low)
    return None


def _by_sign(node: Expr) -> Expr | None:
    """The value of |x|, H(x), delta(a, b) or a relation from the proven sign it turns on."""
    if isinstance(node, sp.Abs):
        sign = proven_sign(node.args[0])
        return None if sign is None else node.args[0] if sign >= 0 else -node.args[0]
    if isinstance(node, sp.Heaviside):
        sign = proven_sign(node.args[0])
        at_zero = node.args[1] if len(node.args) > 1 else sp.S.Half
        return None if sign is None else {1: sp.S.One, -1: sp.S.Zero, 0: at_zero}[sign]
    sign = proven_sign(_difference(*node.args))
    if sign is None:
        return None
    if isinstance(node, sp.KroneckerDelta):
        return sp.S.One if sign == 0 else sp.S.Zero
    holds = {"==": sign == 0, "!=": sign != 0, "<": sign < 0, "<=": sign <= 0,
             ">": sign > 0, ">=": sign >= 0}[node.rel_op]
    return sp.true if holds else sp.false


def _difference(a: Expr, b: Expr) -> Expr:
    # as written: SymPy would decide it as it builds it
    return sp.Add(a, sp.Mul(-1, b, evaluate=False), evaluate=False)


# sympy.evaluate(False) empties SymPy's whole cache as it is entered and left (so that nothing
# built without evaluation is handed out later), and building as written happens hundreds of
# times in a check: these classes take evaluate=False themselves, which their cache keeps apart
_TAKE_EVALUATE = (sp.core.operations.AssocOp, sp.Pow, sp.core.function.Application,
                  sp.core.relational.Relational)


def as_written(func, args) -> Expr:
    """func(*args) built without evaluation, as under sympy.evaluate(False)."""
    if isinstance(func, type) and issubclass(func, _TAKE_EVALUATE):
        try:
            return func(*args, evaluate=False)
        except TypeError:  # a constructor of its own that takes no options (betainc)
            pass
    with sp.evaluate(False):
        return func(*args)


def written_with(expr: Expr, values: dict) -> Expr:
    """expr.xreplace(values) built without evaluation (what replaced nothing stays as is)."""
    if expr in values:
        return values[expr]
    if not expr.args:
        return expr
    args = [written_with(a, values) for a in expr.args]
    if all(new is old for new, old in zip(args, expr.args)):
        return expr
    return as_written(expr.func, args)


class MisjudgedNumber(UnsupportedExpression):
    """Putting values in makes a number that SymPy misjudges as it builds it."""

    def __init__(self, number: Expr):
        super().__init__(f"putting the values in makes the number {number}, which SymPy "
                         "misjudges as it builds it (its value or sign differs from the "
                         "proven one, or none is proven): not evaluated")
        self.number = number


def put_in(expr: Expr, values: dict, put=None) -> Expr:
    """``put(expr, values)`` (by default expr.xreplace(values)), refused (MisjudgedNumber)
    where a number it makes is one SymPy misjudges: the parts of expr that become numbers,
    other than by rational arithmetic, are built as written and checked as they are made
    (``built_as_written``).  floor(-sin(log(1 + d 10^-60))) is -1 at every d, but SymPy
    builds it as 0 at d = 1 (review round 50).  A ``put`` of its own (one that respects
    bound indices) is checked on the whole of what it makes."""
    if not values:
        return put(expr, values) if put else expr
    values = {key: sp.sympify(value) for key, value in values.items()}
    parts = _parts_to_check(expr, frozenset(values),
                            all(v.is_Rational for v in values.values()))
    if put is not None:
        if not parts:
            return put(expr, values)
        with sp.evaluate(False):
            written = put(expr, values)
        return built_as_written(written, kept=(expr,))
    checked = {part: built_as_written(written_with(part, values), kept=(part,))
               for part in parts}
    return expr.xreplace({**values, **checked})


def built_as_written(written: Expr, kept: tuple = ()) -> Expr:
    """``written`` (built without evaluation) built as SymPy builds it, innermost first, each
    number checked as it is made (MisjudgedNumber): its sign as SymPy's assumptions say it
    against its proven sign, and what SymPy made of it against what a proof makes (a floor,
    sign, |.|, maximum, relation, Kronecker delta decided; e^t made 1 where the enclosures
    differ).  Checked where made, because SymPy's answers about a number depend on what it
    was asked before: the t that a check built as written was once 0 to SymPy, and once
    not.  The parts of the expressions ``kept`` are taken as they are."""
    numbers = set(_numbers_in(written))
    kept_parts = {id(node) for x in kept for node in sp.preorder_traversal(x)}
    built: dict = {}

    def build(node):
        if id(node) in kept_parts or not node.args:
            return node
        if id(node) not in built:
            args = [build(a) for a in node.args]
            try:
                made = node.func(*_not_exceeded(node.func, args))
            except Exception as error:  # noqa: BLE001 - SymPy failing on it says nothing
                raise MisjudgedNumber(node) from error
            if node in numbers and not _made_as_proven(node.func, args, made):
                made = _proven_extreme(node.func, args, refused=made)
            built[id(node)] = made
        return built[id(node)]
    return build(written)


def _not_exceeded(func, args: list) -> list:
    """The arguments of a maximum (minimum) of numbers that no other is proven larger
    (smaller) than, by enclosures; all of them otherwise, or where one has none.  SymPy
    compares a maximum's arguments pairwise by evalf: the 65 corner values of an entropy floor
    at n = 64 took 0.55 s to write out, 0.37 s given only these.  What SymPy makes of them is
    checked against all the arguments (``_decided_as_proven``)."""
    if func not in (sp.Max, sp.Min) or not all(a.is_number for a in args):
        return args
    try:
        boxes = [enclosure(a, PRECISIONS[0]) for a in args]
    except NoEnclosure:
        return args
    if func is sp.Max:
        floor = max(box.a for box in boxes)
        return [a for a, box in zip(args, boxes) if box.b >= floor]
    ceiling = min(box.b for box in boxes)
    return [a for a, box in zip(args, boxes) if box.a <= ceiling]


def _proven_extreme(func, args: list, refused: Expr) -> Expr:
    """The value of a maximum (minimum) of numbers whose argument SymPy's evalf chose wrongly:
    the argument that every other is proven not to exceed (not to fall below), with up to
    PRECISIONS[-1] bits, where 64-bit enclosures did not set the others aside
    (Min(log(1 + 3 10^-40), 2 10^-40 - 10^-80), review round 61).  MisjudgedNumber(refused)
    for any other function, or where the proven signs do not single one out."""
    if func not in (sp.Max, sp.Min):
        raise MisjudgedNumber(refused)
    larger = 1 if func is sp.Max else -1
    best = args[0]
    for a in args[1:]:  # a knockout: each argument against the best so far
        sign = proven_sign(_difference(a, best))
        if sign is None:
            raise MisjudgedNumber(refused)
        if sign == larger:
            best = a
    if not _made_as_proven(func, args, best) or any(
            proven_sign(_difference(best, a)) not in (0, larger) for a in args if a is not best):
        raise MisjudgedNumber(refused)
    return best


def _made_as_proven(func, args: list, made) -> bool:
    """Whether the number ``made`` = func(*args), as SymPy made it, is what a proof makes of
    it: no sign that its assumptions give it is disproven, and what SymPy decided or
    collapsed agrees with the proven value (see _decided_as_proven) or is not told apart
    from it by enclosures at PRECISIONS[-1] bits."""
    if isinstance(made, Expr) and not made.is_Rational and not made.has(*_NOT_FINITE) \
            and _sign_misjudged(made):
        return False
    if all(a.is_Rational for a in args):
        return True  # SymPy is exact on rationals
    written = as_written(func, args)
    if written == made:
        return True
    if isinstance(written, _DECIDED):
        return _decided_as_proven(written, made)
    return _not_told_apart(written, made)


def _sign_misjudged(number: Expr) -> bool:
    sign = proven_sign(number)
    said = {0: _said(number, "zero"), 1: _said(number, "positive"),
            -1: _said(number, "negative")}
    return any(claim is True and sign != value for value, claim in said.items())


def _not_told_apart(a: Expr, b: Expr) -> bool:
    """Whether no enclosure of a and b, up to PRECISIONS[-1] bits, shows them different
    (an enclosure that cannot be made shows nothing)."""
    if not (isinstance(a, Expr) and isinstance(b, Expr)):
        return a == b
    for prec in PRECISIONS:
        try:
            first, second = enclosure(a, prec), enclosure(b, prec)
        except NoEnclosure:
            return True
        if first.b < second.a or second.b < first.a:
            return False
    return True


@lru_cache(maxsize=1024)  # a side is given values at every parameter point in turn
def _parts_to_check(expr: Expr, given: frozenset, rational: bool) -> tuple[Expr, ...]:
    """The largest parts of expr that giving the symbols ``given`` values makes numbers, other
    than those made by rational arithmetic alone (``rational``: the values are rationals; put
    into sums, products and whole powers), which SymPy does exactly."""
    kinds = _kinds(expr, given)

    def arithmetic(node) -> bool:
        return kinds[node] == 0 or node in given or (
            (isinstance(node, (sp.Add, sp.Mul))
             or (isinstance(node, sp.Pow) and node.exp.is_Integer))
            and all(arithmetic(a) for a in node.args))

    parts: list = []

    def visit(node) -> None:
        if kinds[node] == 1 and not (rational and arithmetic(node)):
            parts.append(node)
        elif kinds[node] == 2:
            for a in node.args:
                visit(a)
    visit(expr)
    return tuple(parts)


@lru_cache(maxsize=4096)
def rational_bounds(x: Expr, relative: float = 2.0**-56) -> tuple[Rational, Rational]:
    """Rationals lo <= x <= hi, as close as ``relative`` of |x| where the precision allows."""
    for prec in PRECISIONS:
        low, high = _ends_of(enclosure(x, prec))
        if high - low <= relative * max(abs(low), abs(high)):
            break
    return _rational(low), _rational(high)


def approximation(x: Expr, bits: int) -> mpmath.mpf:
    """x to within 2^-bits of its size, proven (the midpoint of a narrow enough enclosure);
    NoEnclosure where none is narrow enough."""
    for prec in PRECISIONS:
        if prec < bits + 16:
            continue
        low, high = _ends_of(enclosure(x, prec))
        with mpmath.workprec(prec):
            middle, width = (low + high) / 2, high - low
            if width <= mpmath.ldexp(max(abs(low), abs(high)), -bits):
                return middle
    raise NoEnclosure(f"cannot tell {x} to {bits} bits")


@lru_cache(maxsize=4096)
def nearest_double(x: Expr) -> float:
    """The double nearest to the real number x, once both ends of its enclosure round to it;
    refused (NoEnclosure) if they never do, or if x underflows (10^-400 is not 0)."""
    for prec in PRECISIONS:
        box = enclosure(x, prec)
        low, high = (float(end) for end in _ends_of(box))  # each to nearest
        if low == high and abs(low) != float("inf"):
            break
    else:
        raise NoEnclosure(f"cannot tell the double nearest to {x}")
    tiny = 2.2250738585072014e-308  # the smallest normal double
    if abs(low) < tiny and not (box.a == 0 and box.b == 0):
        raise NoEnclosure(f"{x} falls below double precision (underflow)")
    return low


def _ends_of(box) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The interval's ends as they are: mpmath.mpf(box.a) would round them to 53 bits."""
    return tuple(mpmath.mp.make_mpf(end) for end in box._mpi_)


def _rational(end: mpmath.mpf) -> Rational:
    sign, mantissa, exponent, _ = end._mpf_  # exactly: the ends are binary numbers
    return (-1) ** sign * Rational(int(mantissa)) * Rational(2) ** int(exponent)


def _enclose(x: Expr):
    if x.is_Rational:
        return iv.mpf(int(x.p)) / int(x.q)
    if x.is_Float:
        return iv.mpf(mpmath.mp.make_mpf(x._mpf_))  # exactly, then outwards
    if x in _CONSTANTS:
        return _CONSTANTS[x]()
    for kind, rule in _RULES:
        if isinstance(x, kind):
            return rule(x)
    raise NoEnclosure(f"no interval version of {type(x).__name__} ({x})")


def _fold(x: Expr, combine):
    parts = [_enclose(a) for a in x.args]
    total = parts[0]
    for part in parts[1:]:
        total = combine(total, part)
    return total


def _power(x: sp.Pow):
    base, exponent = _enclose(x.base), x.exp
    root = _rational_power(base, exponent)
    if root is not None:  # sqrt(4) is 2 exactly, and floor(sqrt(4)) then 2
        return iv.mpf(int(root.p)) / int(root.q)
    if exponent.is_Integer and abs(exponent) <= MAX_EXPONENT:
        if exponent < 0 and base.a <= 0 <= base.b:
            raise NoEnclosure(f"{x}: a negative power of what may be 0")
        return base ** int(exponent)
    if base.a > 0:  # a real power of a positive number (SymPy's root of a negative is complex)
        return _exp_of(_enclose(exponent) * iv.log(base))
    if base.a == 0 and base.b == 0 and proven_sign(exponent) == 1:
        return iv.mpf(0)
    raise MaybeNotReal(f"{x}: a power of what may be <= 0")


def _rational_power(base, exponent: Expr) -> Rational | None:
    """base^(m/n) for a base enclosed exactly as a positive rational whose n-th root is
    rational; None otherwise."""
    if not (exponent.is_Rational and base.a == base.b and base.a > 0
            and abs(exponent.p) <= 64):  # beyond, the exact power is too long to be of use
        return None
    value = _rational(_ends_of(base)[0])
    numerator, exact = sp.integer_nthroot(int(value.p), int(exponent.q))
    denominator, also = sp.integer_nthroot(int(value.q), int(exponent.q))
    return Rational(numerator, denominator) ** int(exponent.p) if exact and also else None


def _exp_of(argument):
    if argument.b > MAX_EXPONENT:
        raise NoEnclosure(f"e^{argument} is too large to enclose")
    return iv.exp(argument)


def _log(x: sp.log):
    argument = _enclose(x.args[0])
    if not argument.a > 0:
        raise MaybeNotReal(f"{x}: the logarithm of what may be <= 0")
    return iv.log(argument)


def _periodic(function):
    def enclose(x):
        argument = _enclose(x.args[0])
        if max(abs(argument.a), abs(argument.b)) > 2 ** iv.prec:  # no digits of its phase
            return iv.mpf([-1, 1])
        return function(argument)
    return enclose


def _tanh(x: sp.tanh):
    """tanh u = 1 - 2 / (e^(2u) + 1), increasing in e^(2u), which occurs once: tight."""
    argument = _enclose(x.args[0])
    if argument.b > MAX_EXPONENT or argument.a < -MAX_EXPONENT:
        return iv.mpf([-1, 1])
    return 1 - 2 / (iv.exp(2 * argument) + 1)


def _sum(x: sp.Sum):
    """A sum over whole numbers lower..upper, term by term (SymPy's sum over a reversed range
    is minus the sum over the gap, Karr's convention: not enclosed here).  Each term is built
    as written: SymPy would evaluate floor(sin(log(cos(t/10^50)))) at t = 1 to 0 by evalf,
    where it is -1 (review round 50); the limits are whole numbers by proof."""
    *inner, (index, lower, upper) = x.limits
    function = sp.Sum(x.function, *inner) if inner else x.function
    lower, upper = _whole_number(lower), _whole_number(upper)
    if not -1 <= upper - lower < MAX_TERMS:
        raise NoEnclosure(f"{x}: not a sum of at most {MAX_TERMS} terms")
    total = iv.mpf(0)
    for value in range(lower, upper + 1):
        total += _enclose(written_with(function, {index: sp.Integer(value)}))
    return total


def _whole_number(x: Expr) -> int:
    """x as an int, where an enclosure proves it one (a limit built as written, 2 + 1)."""
    if x.is_Integer:
        return int(x)
    low, high = _ends_of(_enclose(x))
    if low != high or low != int(low):
        raise NoEnclosure(f"{x} is not proven a whole number")
    return int(low)


def _ends(x: Expr, pick):
    parts = [_enclose(a) for a in x.args]
    return iv.mpf([pick(p.a for p in parts), pick(p.b for p in parts)])


def _sign(x: sp.sign):
    argument = _enclose(x.args[0])
    low = 1 if argument.a > 0 else 0 if argument.a >= 0 else -1
    high = -1 if argument.b < 0 else 0 if argument.b <= 0 else 1
    return iv.mpf([low, high])


def _rounded(function):
    def enclose(x):
        # floor and ceiling are monotone, and exact when taken with as many bits as the ends
        # have (at mpmath's 53, floor(2^60 + 255) was 2^60 + 256)
        ends = _ends_of(_enclose(x.args[0]))
        with mpmath.workprec(max(53, *(end._mpf_[3] for end in ends))):
            return iv.mpf([function(end) for end in ends])
    return enclose


# functions whose value SymPy decides, when it builds them from numbers, by comparing numbers
_DECIDED = (sp.floor, sp.ceiling, sp.sign, sp.Abs, sp.Max, sp.Min, sp.Heaviside,
            sp.KroneckerDelta, sp.Mod, sp.frac, sp.core.relational.Relational)
# +: mpmath's constants are evaluated when used, at the precision of that moment
_CONSTANTS = {sp.pi: lambda: +iv.pi, sp.E: lambda: +iv.e, sp.EulerGamma: lambda: +iv.euler}
_RULES = [
    (sp.Add, lambda x: _fold(x, lambda a, b: a + b)),
    (sp.Mul, lambda x: _fold(x, lambda a, b: a * b)),
    (sp.Pow, _power),
    (sp.Sum, _sum),
    (sp.exp, lambda x: _exp_of(_enclose(x.args[0]))),
    (sp.log, _log),
    (sp.sin, _periodic(iv.sin)),
    (sp.cos, _periodic(iv.cos)),
    (sp.tanh, _tanh),
    (sp.Abs, lambda x: abs(_enclose(x.args[0]))),
    (sp.Max, lambda x: _ends(x, max)),
    (sp.Min, lambda x: _ends(x, min)),
    (sp.sign, _sign),
    (sp.floor, _rounded(mpmath.floor)),
    (sp.ceiling, _rounded(mpmath.ceil)),
]
