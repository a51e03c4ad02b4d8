"""What a symbol's declared assumptions say about a claim.  Symbol("a", negative=True) makes
every claim about a a claim about a < 0, and SymPy reasons with it silently (|a| becomes -a):
a report shows such conditions beside the claim, as it shows i != j.  The conditions are read
from what SymPy deduces, not from the words declared: nonnegative and nonzero together are
c > 0, nonnegative and nonpositive together are c = 0 (review round 87).  A declaration that
fixes the value hides a number behind a name, and one that no condition here states (even,
prime, commutative=False, none at all: a complex number) says what no report would show.
"""

from __future__ import annotations

import sympy as sp
from sympy import Expr, Symbol

#: the sign SymPy deduces, strongest first, and the condition it puts on the symbol
SIGNS = {"positive": sp.StrictGreaterThan, "negative": sp.StrictLessThan,
         "nonnegative": sp.GreaterThan, "nonpositive": sp.LessThan, "nonzero": sp.Unequality}
#: the kind of number SymPy deduces, narrowest first, and the set it puts the symbol in
KINDS = {"integer": sp.S.Integers, "rational": sp.S.Rationals}
#: what a parameter may be declared: a real number, with a sign and a kind
ALLOWED = {"real", "finite", "commutative", *SIGNS, *KINDS}


def unreadable_declarations(symbol: Symbol) -> list[str]:
    """Why the symbol's declaration reads as no condition of SIGNS and KINDS, or []: it is not
    real, fixes the value 0, or says more (even, prime) or less (negative=False) than they."""
    declared = symbol._assumptions_orig
    problems = [f"{name}={value}" for name, value in sorted(declared.items())
                if name not in ALLOWED or value is not True]
    if symbol.is_real is not True:
        problems.append("not real")
    if symbol.is_zero:
        problems.append("zero (the number 0)")
    return problems


def conditions(symbol: Symbol) -> list[Expr]:
    """The conditions the symbol's declarations put on a claim about it, as SymPy deduces
    them: its kind of number, then its sign (a positive integer c: c ∈ ℤ, c > 0)."""
    kind = next((name for name in KINDS if getattr(symbol, f"is_{name}")), None)
    sign = next((name for name in SIGNS if getattr(symbol, f"is_{name}")), None)
    found = [sp.Contains(symbol, KINDS[kind], evaluate=False)] if kind else []
    if sign:
        found.append(SIGNS[sign](symbol, 0, evaluate=False))
    return found
