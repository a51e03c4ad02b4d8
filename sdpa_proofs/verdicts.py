"""A check's verdict: "pass", "fail" or "undecided", with the reason and any counterexample."""

from __future__ import annotations

from dataclasses import dataclass

PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
NOT_APPLICABLE = "n/a"  # Monte Carlo of a claim it cannot sample


@dataclass
class Verdict:
    status: str
    reason: str = ""
    digits: float | None = None
    counterexample: dict | None = None
    #: for a pass: whether it establishes the relation for every d (a proof), or only finds no
    #: counterexample where it looked
    conclusive: bool = True
    #: what a pass rests on beyond the trusted base: user rules, lemmas, cited derivations
    assumes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == PASS


def combine(*verdicts: Verdict) -> Verdict:
    """The weakest of several verdicts: any fail fails, else any undecided is undecided."""
    for status in (FAIL, UNDECIDED):
        for v in verdicts:
            if v.status == status:
                return v
    return Verdict(PASS, digits=min((v.digits for v in verdicts if v.digits is not None),
                                    default=None),
                   conclusive=all(v.conclusive for v in verdicts),
                   assumes=tuple(dict.fromkeys(a for v in verdicts for a in v.assumes)))


@dataclass
class MonteCarloResult:
    """The claim sampled at dimension ``d``: the left side's estimate with its 95% interval,
    the right side's, and whether they agree."""

    d: int
    samples: int
    estimate: float
    ci_low: float
    ci_high: float
    expected: float
    status: str
    reason: str = ""
    dimension: str = "d"  # the name of the size sampled: d for q, k in R^d, n for n logits
