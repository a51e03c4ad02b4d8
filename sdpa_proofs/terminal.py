"""Terminal rendering with rich: one compact table, then every failure spelled out."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .checks import FAIL, PASS, UNDECIDED
from .montecarlo import NOT_APPLICABLE
from .report import ERROR, FAILED, VERIFIED, DerivationReport, RunReport

STYLE = {VERIFIED: "bold green", FAILED: "bold red", UNDECIDED: "bold yellow", ERROR: "bold red",
         PASS: "green", FAIL: "red", NOT_APPLICABLE: "dim"}


def _cell(status: str, detail: str = "") -> Text:
    return Text(detail or status, style=STYLE.get(status, ""))


def _symbolic(d: DerivationReport) -> Text:
    verdicts = [d.worst_step(n, "symbolic").status for n in range(d.step_count)]
    passed = verdicts.count(PASS)
    worst = FAIL if FAIL in verdicts else UNDECIDED if UNDECIDED in verdicts else PASS
    return _cell(worst, f"{passed}/{len(verdicts)} pass")


def _numeric(d: DerivationReport) -> Text:
    verdicts = [d.worst_step(n, "numeric_check") for n in range(d.step_count)]
    statuses = [v.status for v in verdicts]
    worst = FAIL if FAIL in statuses else UNDECIDED if UNDECIDED in statuses else PASS
    digits = [v.digits for v in verdicts if v.digits is not None]
    detail = f"≥{min(digits):.0f} digits" if worst == PASS and digits else worst
    return _cell(worst, detail)


def _monte_carlo(d: DerivationReport) -> Text:
    results = [r for m in d.models for r in m.monte_carlo]
    if not results:
        return _cell(NOT_APPLICABLE, "not run")
    sampled = [r for r in results if r.status != NOT_APPLICABLE]
    if not sampled:
        return _cell(NOT_APPLICABLE, "n/a")
    failed = [r for r in sampled if r.status != PASS]
    largest = max(r.d for r in sampled)
    return _cell(FAIL if failed else PASS,
                 f"{len(sampled) - len(failed)}/{len(sampled)} in CI (d ≤ {largest})")


def summary_table(run: RunReport) -> Table:
    table = Table(title="sdpa-proofs verify", title_justify="left", header_style="bold")
    table.add_column("derivation", no_wrap=True)
    table.add_column("claim", overflow="fold")
    for column in ("models", "steps", "symbolic", "numeric", "Monte Carlo", "status"):
        table.add_column(column, no_wrap=True)
    for d in run.derivations:
        if d.status == ERROR:
            table.add_row(d.name, "", "", "", "", "", "", _cell(ERROR))
            continue
        table.add_row(d.name, d.claim, str(len(d.models)), str(d.step_count), _symbolic(d),
                      _numeric(d), _monte_carlo(d), _cell(d.status))
    return table


def failure_details(d: DerivationReport) -> list[Text]:
    """Every failed or undecided check of a derivation, with where and why."""
    if d.status == ERROR:
        return [Text(f"error: {d.error}", style="red")]
    lines = []
    for m in d.models:
        for s in m.steps:
            for label, verdict in (("rule", s.rule_check), ("exact", s.exact_check),
                                   ("numeric", s.numeric_check)):
                if verdict.status != PASS:
                    lines.append(Text(f"{d.name}: step {s.index} ({s.rule}) at {s.location} "
                                      f"under {m.model}: {label} check {verdict.status}: "
                                      f"{verdict.reason}", style=STYLE[verdict.status]))
        if m.conclusion.status != PASS:
            lines.append(Text(f"{d.name} under {m.model}: {m.conclusion.reason}", style="red"))
        for r in m.monte_carlo:
            if r.status == FAIL:
                lines.append(Text(f"{d.name} under {m.model}: Monte Carlo at d = {r.d} "
                                  f"({r.samples} samples): {r.reason}; 95% CI "
                                  f"[{r.ci_low:.6g}, {r.ci_high:.6g}]", style="red"))
    return lines


def render(run: RunReport, console: Console) -> None:
    console.print(summary_table(run))
    for d in run.derivations:
        for line in failure_details(d):
            console.print(line, soft_wrap=True)  # one finding per line: greppable in CI logs
    verified = sum(d.status == VERIFIED for d in run.derivations)
    console.print(f"{verified} of {len(run.derivations)} derivations verified.",
                  style="bold green" if verified == len(run.derivations) else "bold red")
