"""The values a user gives on the command line or to the pytest plugin, each checked as it is
read: both front ends take the same numbers with the same meaning, and a value outside them is
a usage error there, never a setting the checks run under (a negative digit count made every
step of a true derivation fail its numeric check, review round 61)."""

from __future__ import annotations

import argparse

MAX_DIGITS = 500


def digits(value: str) -> int:
    """Significant digits the numeric check requires: a whole number from 1 to MAX_DIGITS."""
    try:
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= count <= MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"digits must be between 1 and {MAX_DIGITS}")
    return count


def allowance(value: str) -> float | None:
    """A budget of seconds or a cap of GiB: a finite number, at least 0; 0 is none (None)."""
    try:
        amount = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not amount >= 0 or amount == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r}: give a finite number, at least 0")
    return amount or None


def model_name(value: str) -> str:
    """The name of a bundled model (the models are imported only when one is named)."""
    from .models import MODELS

    if value not in MODELS:
        raise argparse.ArgumentTypeError(f"unknown model {value!r}; known: {', '.join(MODELS)}")
    return value
