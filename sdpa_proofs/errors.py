"""The kinds of trouble a check can run into, shared by every part of the toolkit."""


class UnsupportedExpression(ValueError):
    """An expression outside what an engine can evaluate: the check is undecided."""


class BadInput(ValueError):
    """A derivation that cannot be checked as written (an undeclared name, a sum over the wrong
    range, a parameter outside its domain): the user's to fix, reported with file and step."""


class BudgetExceeded(BaseException):
    """A check ran out of its time budget.  A BaseException, as pytest's outcomes are, so that
    no ``except Exception`` on the way swallows it."""
