"""One-line Unicode rendering for terminals, messages and JSON: E[S], σ_q², Σ_{i≠j}."""

from __future__ import annotations

from sympy import (
    Add,
    Basic,
    Derivative,
    Dummy,
    Expr,
    Indexed,
    Mul,
    Pow,
    S,
    Sum,
    Symbol,
    default_sort_key,
)
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.pretty.pretty_symbology import pretty_symbol
from sympy.printing.str import StrPrinter

from .expressions import MaxOver, SumOverDistinct
from .limits import Lim

_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
#: what reaches to the right when printed bare: Σ_i ..., max_l ..., ∂/∂z ..., lim_n ...
REACHING = (Sum, SumOverDistinct, MaxOver, Derivative, Lim)


READING_ORDER = {"d": 0, "rho": 1, "alpha": 2, "beta": 3, "mu": 4, "q": 5, "k": 6}


def reading_rank(factor: Expr) -> tuple:
    """Sort key for the factors of a product as people write them: numbers, d, q-things,
    k-things, the rest (SymPy's own order is alphabetical: k_i q_i, sigma_k sigma_q)."""
    names = [str(s) for s in factor.free_symbols if not isinstance(s, Indexed)]
    names += [str(x.base) for x in factor.atoms(Indexed)]
    ranks = [READING_ORDER.get(part, len(READING_ORDER))
             for name in names for part in name.split("_")]
    return (not factor.is_number, sorted(ranks) or [0], default_sort_key(factor))


def in_reading_order(printer, expr: Mul, print_mul) -> str:
    """Print a product with its factors in reading order through ``print_mul``."""
    if not isinstance(expr, Mul):  # SymPy's LaTeX printer sends 1/d here as the power it is:
        return print_mul(expr)     # rebuilt from its arguments (d, -1) it printed as -d
    ordered = Mul(*sorted(expr.args, key=reading_rank), evaluate=False)
    saved, printer._settings["order"] = printer._settings["order"], "none"
    try:
        return print_mul(ordered)
    finally:
        printer._settings["order"] = saved


class TextPrinter(StrPrinter):
    printmethod = "_sdpa_text"  # so that Indexed's own _sympystr does not take over

    def doprint(self, expr) -> str:
        """As StrPrinter prints, with primes on the checks' own renamed indices where they
        would print like another symbol: Σ_{i′≠i″} q_i·q_i′, not Σ_{i≠i} q_i·q_i."""
        self._primes = _primes(expr) if isinstance(expr, Basic) else {}
        return super().doprint(expr)

    def _print_Exp1(self, expr: Expr) -> str:
        return "e"  # E is the expectation here

    def parenthesize(self, item, level, strict=False) -> str:
        """A sum, maximum or derivative as a factor or a base is bracketed whole: "Σ_i a_i·b"
        or "∂/∂z z²·z" would read as if it reached over what follows."""
        if isinstance(item, REACHING) and level >= PRECEDENCE["Add"]:
            return f"({self._print(item)})"
        return super().parenthesize(item, level, strict)

    def _print_Add(self, expr: Expr, order=None) -> str:
        """As StrPrinter prints a sum of terms, but a term that reaches to the right (Σ, max,
        ∂) is bracketed: "∂/∂z z² + z" would read as the derivative of z² + z."""
        printed = []
        for term in self._as_ordered_terms(expr, order=order):
            text = self._print(term)
            sign = "+"
            if text.startswith("-") and not term.is_Add:
                sign, text = "-", text[1:]
            if isinstance(term, REACHING) or term.is_Add or \
                    precedence(term) < precedence(expr):
                text = f"({text})"
            printed += [sign, text]
        first = printed.pop(0)
        return ("" if first == "+" else first) + " ".join(printed)

    def _print_Relational(self, expr: Expr) -> str:
        """A condition as a reader writes it: c ≥ 0, c ≠ 0."""
        sign = {"!=": "≠", ">=": "≥", "<=": "≤"}.get(expr.rel_op)
        if sign is None:
            return super()._print_Relational(expr)
        return f"{self._print(expr.lhs)} {sign} {self._print(expr.rhs)}"

    def _print_Contains(self, expr: Expr) -> str:
        element, within = expr.args
        named = {S.Integers: "ℤ", S.Rationals: "ℚ", S.Reals: "ℝ"}
        return f"{self._print(element)} ∈ {named.get(within) or self._print(within)}"

    def _print_Symbol(self, expr: Expr) -> str:
        head, _, tail = expr.name.partition("_")
        return pretty_symbol(head) + (f"_{tail}" if tail else "")

    def _print_Dummy(self, expr: Expr) -> str:
        """An unknown standing for a number is named after it (-1/10**40, 1 + sqrt(2)): such a
        name is bracketed unless it reads as one token, or "x·-1/10⁴⁰" and "1 + sqrt(2)²"
        would misstate what it multiplies or raises."""
        text = self._print_Symbol(expr).replace("**", "^").replace("*", "·")
        text += "′" * getattr(self, "_primes", {}).get(expr, 0)
        return text if _one_token(expr.name) else f"({text})"

    def _print_Indexed(self, expr: Expr) -> str:
        base = self._print_Symbol(expr.base.label)
        indices = [self._print(i) for i in expr.indices]
        if len(indices) == 1 and "_" not in base:
            index = indices[0]
            return f"{base}_{index}" if expr.indices[0].is_Atom else f"{base}_{{{index}}}"
        return f"{base}[{','.join(indices)}]"

    def _print_E(self, expr: Expr) -> str:
        return f"E[{self._print(expr.args[0])}]"

    def _print_Var(self, expr: Expr) -> str:
        return f"Var({self._print(expr.args[0])})"

    def _print_SD(self, expr: Expr) -> str:
        return f"sd({self._print(expr.args[0])})"

    def _print_Cov(self, expr: Expr) -> str:
        return "Cov({}, {})".format(*(self._print(a) for a in expr.args))

    def _base(self, base: Expr) -> str:
        """A power's base, in parentheses unless it is a single symbol, entry or moment."""
        return self.parenthesize(base, PRECEDENCE["Pow"])

    def _print_Pow(self, expr: Pow, rational: bool = False) -> str:
        if expr.exp.is_Integer and expr.exp > 1:
            return self._base(expr.base) + str(int(expr.exp)).translate(_SUPERSCRIPTS)
        if expr.exp == 1 / 2 or str(expr.exp) == "1/2":
            return f"√{self._base(expr.base)}"
        printed = super()._print_Pow(expr, rational)
        # StrPrinter's ** (and the 1/x it writes for x^-1) read as they are; only ** becomes ^
        return printed.replace("**", "^")

    def _print_Mul(self, expr: Mul) -> str:
        # "*" between factors is "·"; a power's "**" was printed as "^" already
        return in_reading_order(self, expr, super()._print_Mul).replace("*", "·")

    def _print_Sum(self, expr: Expr) -> str:
        signs = "".join(f"Σ_{{{self._print(v)}={self._print(lo)}..{self._print(hi)}}} "
                        for v, lo, hi in reversed(expr.limits))
        return signs + self.parenthesize(expr.function, 45)

    def _print_SumOverDistinct(self, expr: Expr) -> str:
        i, j = (self._print(x) for x in expr.indices)
        return f"Σ_{{{i}≠{j}=1..{self._print(expr.upper)}}} " + \
            self.parenthesize(expr.function, 45)


    def _print_KroneckerDelta(self, expr: Expr) -> str:
        return "δ_{" + ",".join(self._print(a) for a in expr.args) + "}"

    def _power(self, count: Expr) -> str:
        """An order as a superscript where it is a number, else as ^(...)."""
        return str(count).translate(_SUPERSCRIPTS) if count.is_Integer else f"^({count})"

    def _print_Derivative(self, expr: Expr) -> str:
        """∂²/∂z_1² f for the second derivative: the order on ∂ as well as on the variable."""
        order = Add(*(c for _, c in expr.variable_count))  # a symbol t for d^t/dz^t
        variables = "".join(f"∂{self._print(v)}" + (self._power(c) if c != 1 else "")
                            for v, c in expr.variable_count)
        top = "∂" + (self._power(order) if order != 1 else "")
        return f"{top}/{variables} " + self.parenthesize(expr.expr, 45)

    def _print_MaxOver(self, expr: Expr) -> str:
        (index, lower, upper), = expr.limits
        return (f"max_{{{self._print(index)}={self._print(lower)}..{self._print(upper)}}} "
                + self.parenthesize(expr.function, 45))


    def _print_Lim(self, expr: Expr) -> str:
        return f"lim_{{{self._print(expr.variable)}→∞}} " + self.parenthesize(expr.body, 45)


def _one_token(name: str) -> bool:
    """Whether a name has no operator or space outside brackets (sqrt(2), pi, x_1, 3)."""
    depth = 0
    for position, char in enumerate(name):
        depth += (char in "([{") - (char in ")]}")
        if depth == 0 and (char in " +*/^" or (char == "-" and position > 0)):
            return False
    return not name.startswith("-")


def _primes(expr: Basic) -> dict:
    """How many primes each Dummy takes: those named alike (and a symbol of that name, which
    keeps its name) are told apart by one prime more each, in the order they were made."""
    named: dict[str, list] = {}
    for symbol in sorted(expr.atoms(Symbol), key=lambda x: (isinstance(x, Dummy),
                                                           getattr(x, "dummy_index", 0))):
        named.setdefault(symbol.name, []).append(symbol)
    return {symbol: n for alike in named.values() if len(alike) > 1
            for n, symbol in enumerate(alike) if isinstance(symbol, Dummy)}


def show(expr: Expr) -> str:
    return TextPrinter().doprint(expr)


def _shown(code: int) -> bool:
    """Characters that would act rather than show: C0 controls but newline and tab, DEL, C1
    (ESC and CSI start terminal escapes, CR overwrites a line), lone surrogates, Unicode's
    direction overrides, and the two non-characters XML forbids."""
    return (code < 32 and code not in (9, 10)) or 0x7F <= code <= 0x9F \
        or 0xD800 <= code <= 0xDFFF or 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069 \
        or code in (0xFFFE, 0xFFFF)


def printable(value: object) -> str:
    """Text from a user (names, titles, messages) made safe to print, log and put in XML:
    every character that would act is written out as \\xNN or \\uNNNN instead."""
    return "".join((f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
                   if _shown(ord(c)) else c for c in str(value))
