"""What a symbol's declared assumptions say about a claim.  Symbol("a", negative=True) makes
every claim about a a claim about a < 0, and SymPy reasons with it silently (|a| becomes -a):
a report shows such conditions beside the claim, as it shows i != j.  Only the declarations
that read as a condition are taken; one that fixes the value (zero=True) hides a number
behind a name.
"""

from __future__ import annotations

import sympy as sp
from sympy import Expr, Symbol

#: a declared sign, strongest first, and the condition it puts on the symbol
SIGNS = {"positive": sp.StrictGreaterThan, "negative": sp.StrictLessThan,
         "nonnegative": sp.GreaterThan, "nonpositive": sp.LessThan, "nonzero": sp.Unequality}
#: a declared kind of number, and the set it puts the symbol in
KINDS = {"integer": sp.S.Integers, "rational": sp.S.Rationals}
#: what goes without saying for a parameter: a real number
PLAIN = {"real", "finite", "commutative"}
ALLOWED = PLAIN | set(SIGNS) | set(KINDS)


def declared(symbol: Symbol) -> dict:
    """The assumptions a symbol was declared with, as written (not SymPy's deductions)."""
    return dict(symbol._assumptions_orig)


def unreadable_declarations(symbol: Symbol) -> list[str]:
    """The declarations of ``symbol`` that no condition of SIGNS or KINDS states: zero=True
    (the number 0 under a name), even, prime, negative=False and the like."""
    return sorted(f"{name}={value}" for name, value in declared(symbol).items()
                  if name not in ALLOWED or (value is not True and name != "commutative"))


def conditions(symbol: Symbol) -> list[Expr]:
    """The conditions the symbol's declarations put on a claim about it: its kind of number,
    then its sign (a positive integer c: c ∈ ℤ, c > 0)."""
    given = {name for name, value in declared(symbol).items() if value is True}
    found = [sp.Contains(symbol, KINDS[name], evaluate=False)
             for name in KINDS if name in given][:1]  # an integer is rational as well
    sign = next((name for name in SIGNS if name in given), None)
    if sign:
        found.append(SIGNS[sign](symbol, 0, evaluate=False))
    return found
