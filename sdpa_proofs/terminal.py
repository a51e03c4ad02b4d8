"""Terminal rendering with rich: one compact table, then every failure spelled out."""

from __future__ import annotations

from statistics import median

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .report import (
    ASSUMING,
    ERROR,
    FAILED,
    INTERNAL,
    REFUTED,
    SAMPLED,
    VERIFIED,
    DerivationReport,
    RunReport,
)
from .verdicts import FAIL, NOT_APPLICABLE, PASS, UNDECIDED

STYLE = {VERIFIED: "bold green", REFUTED: "bold cyan", ASSUMING: "bold yellow",
         FAILED: "bold red", UNDECIDED: "bold yellow", ERROR: "bold red", INTERNAL: "bold red",
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
    detail = f"≥{min(digits):.0f} dig." if worst == PASS and digits else worst
    return _cell(worst, detail)


def _monte_carlo(d: DerivationReport) -> Text:
    return _cell(*monte_carlo_summary([r for m in d.models for r in m.monte_carlo]))


def monte_carlo_summary(results: list) -> tuple[str, str]:
    """(status, what the Monte Carlo column says): "3/3 ok", "n/a", "not run"."""
    if not results:
        return NOT_APPLICABLE, "not run"
    sampled = [r for r in results if r.status != NOT_APPLICABLE]
    if not sampled:
        return NOT_APPLICABLE, "n/a"
    failed = [r for r in sampled if r.status != PASS]
    return FAIL if failed else PASS, f"{len(sampled) - len(failed)}/{len(sampled)} ok"


def _status(d: DerivationReport) -> Text:
    if d.status == REFUTED:
        held = "; the claim held" if d.claim_held else ""
        return _cell(REFUTED, f"refuted at {d.expected_refuted_at}, as expected{held}")
    if d.expected_refuted_at is not None and d.status == FAILED:
        return _cell(FAILED, f"failed (expected refuted at {d.expected_refuted_at})")
    if d.status == ASSUMING:
        return _cell(ASSUMING, "verified, assuming")
    return _cell(d.status, d.status.replace("_", " "))


def summary_table(run: RunReport) -> Table:
    table = Table(title="sdpa-proofs verify", title_justify="left", header_style="bold")
    table.add_column("derivation", overflow="fold", min_width=12, max_width=26)
    table.add_column("claim", overflow="fold", min_width=16, ratio=1)
    for column in ("models", "steps", "symbolic", "numeric", "Monte Carlo", "status"):
        table.add_column(column, no_wrap=True)
    for d in run.derivations:
        if d.status in (ERROR, INTERNAL) or not d.models:
            table.add_row(Text(d.name), Text(d.statement), "", "", "", "", "", _status(d))
            continue
        table.add_row(Text(d.name), Text(d.statement), str(len(d.models)), str(d.step_count),
                      _symbolic(d), _numeric(d), _monte_carlo(d), _status(d))
    return table


def _fitted(table: Table, width: int) -> Table | None:
    """The table with its claim column as wide as the terminal leaves it (rich crops a table
    whose unwrapped columns leave too little, rather than narrowing the wrapped ones), or None
    when the claim would get fewer than its minimum of columns."""
    name, claim, *verdicts = table.columns
    name.width = min(name.max_width, max([len(name.header), *(len(str(c)) for c in name.cells)]))
    taken = name.width + sum(max([len(c.header), *(len(str(x)) for x in c.cells)])
                             for c in verdicts)
    claim.width = width - taken - 3 * len(table.columns) - 1
    claim.ratio = None
    return table if claim.width >= claim.min_width else None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def summary_list(run: RunReport) -> list[Text]:
    """The table's content for a terminal too narrow for it: per derivation its name and status, the
    claim, and the verdicts, each on a line of its own that wraps between words."""
    lines = []
    for d in run.derivations:
        lines.append(Text.assemble((d.name, "bold"), "  ", _status(d)))
        if d.statement:
            lines.append(Text("  ") + Text(d.statement))
        if d.status not in (ERROR, INTERNAL) and d.models:
            lines.append(Text.assemble(
                "  symbolic ", _symbolic(d), " · numeric ", _numeric(d), " · Monte Carlo ",
                _monte_carlo(d), f" · {_count(len(d.models), 'model')}, "
                                 f"{_count(d.step_count, 'step')}"))
    return lines


def failure_details(d: DerivationReport) -> list[Text]:
    """Every failed or undecided check of a derivation, with where and why."""
    if d.status in (ERROR, INTERNAL):
        return [Text(f"{'internal error' if d.internal else 'error'}: {d.error}", style="red")]
    if d.timed_out:
        return [Text(f"{d.name}: undecided: {d.timed_out}", style=STYLE[UNDECIDED])]
    lines = [Text(f"{d.name} assumes: {a}", style="yellow") for a in d.assumptions]
    if d.status == ASSUMING:
        lines.append(Text(f"{d.name}: verified only assuming the above: no check proves step(s) "
                          f"{', '.join(map(str, d.assumed_steps))} for every dimension "
                          "without them",
                          style="yellow"))
    if d.expected_refuted_at is not None and d.status != REFUTED:
        found = sorted({m.first_failing_step for m in d.models}, key=lambda n: n or 0)
        lines.append(Text(f"{d.name}: expected to be refuted at step {d.expected_refuted_at}, "
                          f"but the first failing step is {found}", style="bold red"))
    expected = d.status == REFUTED  # then only the refuting step, shown as information
    if expected and d.claim_held:
        lines.append(Text(f"{d.name}: step {d.expected_refuted_at} is wrong as expected, but the "
                          "claim itself held in every Monte Carlo sample: a wrong step towards "
                          "a true claim, not a false claim", style="yellow"))
    for m in d.models:
        for s in m.steps:
            if expected and s.index != d.expected_refuted_at:
                continue
            for label, verdict in (("rule", s.rule_check), ("exact", s.exact_check),
                                   ("numeric", s.numeric_check)):
                if verdict.status != PASS:
                    prefix = "refuted as expected: " if expected else ""
                    lines.append(Text(f"{prefix}{d.name}: step {s.index} ({s.rule}) at "
                                      f"{s.location} under {m.model}: {label} check "
                                      f"{verdict.status}: {verdict.reason}",
                                      style="cyan" if expected else STYLE[verdict.status]))
        if expected:
            continue
        if m.conclusion.status != PASS:
            lines.append(Text(f"{d.name} under {m.model}: {m.conclusion.reason}", style="red"))
        if m.monte_carlo and all(r.status == NOT_APPLICABLE for r in m.monte_carlo):
            reasons = "; ".join(sorted({r.reason for r in m.monte_carlo}))
            lines.append(Text(f"{d.name} under {m.model}: Monte Carlo n/a: {reasons}",
                              style="dim"))
        for r in m.monte_carlo:
            if r.status == FAIL:
                lines.append(Text(f"{d.name} under {m.model}: Monte Carlo at {r.dimension} = {r.d} "
                                  f"({r.samples} samples): {r.reason}; 95% CI "
                                  f"[{r.ci_low:.6g}, {r.ci_high:.6g}]", style="red"))
    return lines


def growth_table(rows) -> Table:
    """Exact and sampled log-log slopes of Var(S) and E[S^2] against d, one row per model."""
    table = Table(title="growth in d: log-log slope over d = 16 … 4096", title_justify="left",
                  header_style="bold")
    for column in ("model", "statistic", "exact slope", "Monte Carlo slope (95% CI)", "",
                   "closed form"):
        table.add_column(column, overflow="fold")
    for r in rows:
        if r.status == NOT_APPLICABLE:
            table.add_row(r.model, r.statistic, "–", "–", _cell(NOT_APPLICABLE, "n/a"),
                          Text(r.closed_form))
            continue
        table.add_row(r.model, r.statistic, f"{r.exact_slope:.3f}",
                      Text(f"{r.slope:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"),
                      _cell(r.status), Text(r.closed_form))
    return table


def scaling_table(rows) -> Table:
    """Softmax statistics of a row's logits S_j / c: mean ± 1.96 standard errors, the exact
    within-row spread of the logits; where they are close to Gaussian, the large-n value for
    Gaussian logits and whether the estimate agrees with it."""
    from .softmax import LABELS, STATISTICS

    table = Table(title="softmax(S_j / c) over a row of n keys: what the scale does as d grows",
                  title_justify="left",
                  header_style="bold")
    for column in ("model", "c", "d", "n", "row sd/c", *(LABELS[s] for s in STATISTICS),
                   "Gaussian large-n check"):
        table.add_column(column, overflow="fold")
    for r in rows:
        cells = [f"{r.estimates[s].mean:.4g} ± {1.96 * r.estimates[s].error:.2g}"
                 for s in STATISTICS]
        check = ", ".join(f"{name} {r.gaussian_limits[name]:.4g} "
                          f"{'ok' if ok else 'DIFFERS'}" for name, ok in r.agreement.items())
        table.add_row(r.model, r.scale, str(r.d), str(r.n),
                      "–" if r.logit_sd is None else f"{r.logit_sd:.3g}", *cells,
                      _cell(PASS if all(r.agreement.values()) else FAIL, check or "–")
                      if check else Text("–"))
    return table


def mutation_summary(report, console: Console) -> None:
    """Kill rate by kind of mutation; every equivalent mutant with its justification; every
    surviving non-equivalent mutant, which is a hole in the checker."""
    table = Table(title="mutation testing of the checker", title_justify="left",
                  header_style="bold")
    for column in ("mutation", "mutants", "killed", "equivalent", "survived"):
        table.add_column(column)
    kinds = sorted({r.mutant.kind for r in report.results})
    for kind in kinds:
        rows = [r for r in report.results if r.mutant.kind == kind]
        table.add_row(kind, str(len(rows)), str(sum(r.killed for r in rows)),
                      str(sum(bool(r.equivalent_because) for r in rows if not r.killed)),
                      str(sum(not r.killed and not r.equivalent_because for r in rows)))
    console.print(table)
    for r in report.equivalent:
        console.print(Text(f"equivalent: {r.mutant.derivation.name} step {r.mutant.step} "
                           f"({r.mutant.kind}: {r.mutant.description}): {r.equivalent_because}"),
                      style="dim", soft_wrap=True)
    for r in report.survivors:
        console.print(Text(f"SURVIVED: {r.mutant.derivation.name} step {r.mutant.step} "
                           f"({r.mutant.kind}: {r.mutant.description})"), style="bold red",
                      soft_wrap=True)
    relevant = len(report.results) - len(report.equivalent)
    console.print(f"kill rate {100 * report.kill_rate:.1f}% of {relevant} "
                  f"non-equivalent mutants ({len(report.equivalent)} equivalent, "
                  f"{len(report.survivors)} surviving)",
                  style="bold green" if not report.survivors else "bold red")


def file_line(path: str, reports: list[DerivationReport]) -> Text:
    """One line per finished file, for logs without a terminal: status and seconds; for a
    model's Monte Carlo (SAMPLED), what it found for each derivation, not the derivation's
    status, which another check may have failed."""
    if path.startswith(SAMPLED.format(model="")):
        found = ", ".join(f"{d.name} {monte_carlo_summary(m.monte_carlo)[1]}" for d in reports
                          for m in d.models)
        return Text(f"{path}: {found}")
    statuses = ", ".join(f"{d.name} {d.status.replace('_', ' ')}" for d in reports)
    seconds = sum(d.seconds for d in reports)
    return Text(f"{path}: {statuses} ({seconds:.1f} s)")


def render(run: RunReport, console: Console, debug: bool = False) -> None:
    table = _fitted(summary_table(run), console.width)
    if table is None:  # a narrow terminal: a list, which no width can cut
        console.print(Text("sdpa-proofs verify", style="italic"))
        for line in summary_list(run):
            console.print(line)
    else:
        console.print(table)
    for d in run.derivations:
        for line in failure_details(d):
            console.print(line, soft_wrap=True)  # one finding per line: greppable in CI logs
        if debug and d.internal:
            console.print(Text(d.internal), soft_wrap=True)
    count = {status: sum(d.status == status for d in run.derivations)
             for status in (VERIFIED, ASSUMING, REFUTED)}
    summary = f"{count[VERIFIED]} of {len(run.derivations)} derivations verified"
    if count[ASSUMING]:
        summary += f", {count[ASSUMING]} verified only assuming user rules or lemmas"
    if count[REFUTED]:
        summary += f", {count[REFUTED]} refuted as expected"
    console.print(Text(summary + ".", style="bold green" if run.exit_code == 0 else "bold red"))


def _ratio(value: float | None) -> Text:
    """Predicted over measured as a factor, coloured by how far off it is."""
    if value is None:
        return Text("–", style="dim")
    off = max(value, 1 / value) if value > 0 else float("inf")
    style = "green" if off <= 1.25 else "yellow" if off <= 2 else "red"
    return Text(f"×{value:.2f}", style=style)


def empirical_tables(report) -> list[Table]:
    """The measured heads, then what each model predicts for them (predicted / measured), then
    each model's typical and worst factor over the heads."""
    skipped = f", {report.skipped} lines skipped" if report.skipped else ""
    measured = Table(title=f"{report.model} on {report.corpus} ({report.sequences} sequences, "
                           f"{report.tokens} tokens{skipped}): raw logits S = q·k of each head "
                           "(token |ρᵢ|: mean |Corr(qᵢ, kᵢ)| of the same token)",
                     title_justify="left", header_style="bold")
    for column in ("layer", "head", "E[S]", "sd(S)", "sd/√d", "E[S]²/E[S²]", "token |ρᵢ|",
                   "cross/Var", "row/Var", "H/log n"):
        measured.add_column(column, justify="right")
    for r in report.heads:
        m = r.measured
        measured.add_row(str(r.layer), str(r.head), f"{m.logit_mean:.2f}", f"{m.logit_sd:.2f}",
                         f"{m.sd_over_sqrt_d:.2f}", f"{m.mean_fraction:.2f}",
                         f"{float(abs(m.token_correlations).mean()):.2f}",
                         "–" if m.cross_share is None else f"{m.cross_share:.2f}",
                         f"{m.row_share:.2f}",
                         f"{m.entropy_ratio:.2f}")
    return [measured, _predicted_table(report), _prediction_summary(report)]


QUANTITIES = (("variance", "Var(S)"), ("second_moment", "E[S²]"), ("row_spread", "row spread"))


def _predicted_table(report) -> Table:
    """Var(S) and the within-row spread, each model's prediction over the measurement (E[S²]
    follows Var(S) closely: it is in the summary and the JSON)."""
    table = Table(title="predicted / measured, per head (row spread: E[(S - S~)²]/2 for two "
                        "keys of a row, what softmax sees)", title_justify="left",
                  header_style="bold")
    table.add_column("layer", justify="right")
    table.add_column("head", justify="right")
    columns = [(n, quantity) for quantity in ("variance", "row_spread")
               for n, p in enumerate(report.heads[0].predictions)
               if getattr(p, quantity) is not None]
    for n, quantity in columns:
        title = dict(QUANTITIES)[quantity]
        table.add_column(Text(f"{title}\n{report.heads[0].predictions[n].short}"),
                         justify="right")
    for r in report.heads:
        table.add_row(str(r.layer), str(r.head),
                      *(_ratio(r.predictions[n].ratios(r.measured)[quantity])
                        for n, quantity in columns))
    return table


def _prediction_summary(report) -> Table:
    table = Table(title="each model over all heads: the median factor, and the range",
                  title_justify="left", header_style="bold")
    table.add_column("model")
    table.add_column("parameters from the measurement")
    for _, title in QUANTITIES:
        table.add_column(title, justify="right")
    for n, first in enumerate(report.heads[0].predictions):
        cells = []
        for quantity, _ in QUANTITIES:
            values = [r.predictions[n].ratios(r.measured)[quantity] for r in report.heads]
            values = sorted(v for v in values if v is not None)
            cells.append(Text("–", style="dim") if not values else
                         _ratio(median(values)) + Text(
                             f" ({values[0]:.2f}–{values[-1]:.2f})"))
        table.add_row(Text(first.label) + Text(f"\n{first.model}", style="dim"),
                      Text(first.fit), *cells)
    return table
