"""Figures for the scaling comparison (needs the optional ``plot`` extra: matplotlib)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .scaling import SCALES, ScalingRow
from .softmax import LABELS

PANELS = ("logit_sd", "entropy", "max_p", "jacobian")
TITLES = {"logit_sd": "within-row sd of the logits S_j / c", **LABELS}


class PlottingUnavailable(RuntimeError):
    pass


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlottingUnavailable("figures need matplotlib: pip install -e '.[plot]'") from None
    matplotlib.use("Agg")  # files only, no display
    matplotlib.rcParams["svg.hashsalt"] = "sdpa-proofs"  # stable ids: reproducible SVG files
    import matplotlib.pyplot as plt

    return plt


def scaling_figures(rows: list[ScalingRow], directory: Path) -> list[Path]:
    """One figure per model and number of keys: each statistic against d, a line per scale c;
    written as PNG and SVG.  Returns the files written."""
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for model, n in sorted({(r.model, r.n) for r in rows}):
        figure, axes = plt.subplots(1, len(PANELS), figsize=(4 * len(PANELS), 3.6))
        for axis, panel in zip(axes, PANELS):
            for scale in SCALES:
                series = sorted((r for r in rows if (r.model, r.n, r.scale) == (model, n, scale)),
                                key=lambda r: r.d)
                dims = [r.d for r in series]
                if panel == "logit_sd":
                    values = [r.logit_sd for r in series]
                    if None in values:
                        continue
                    axis.plot(dims, values, marker="o", label=f"c = {scale}")
                    axis.set_yscale("log")
                else:
                    axis.errorbar(dims, [r.estimates[panel].mean for r in series],
                                  yerr=[1.96 * r.estimates[panel].error for r in series],
                                  marker="o", capsize=2, label=f"c = {scale}")
            axis.set_xscale("log", base=2)
            axis.set_xlabel("d")
            axis.set_title(TITLES[panel])
        axes[0].legend()
        figure.suptitle(f"softmax(S / c) over n = {n} keys, model {model}")
        figure.tight_layout()
        for suffix in ("png", "svg"):
            path = directory / f"scaling-{model}-n{n}.{suffix}"
            # no creation date in the files, so that regenerated figures are byte-identical
            figure.savefig(path, dpi=110, metadata={"Date": None} if suffix == "svg" else None)
            written.append(path)
        plt.close(figure)
    return written


EMPIRICAL_PANELS = (("variance", "logit_variance", "Var(S) of a single logit"),
                    ("row_spread", "within_row_spread", "within-row spread (what softmax sees)"))


def empirical_figure(report, path: Path) -> Path:
    """Measured against predicted, one point per head and a colour per model, for Var(S) and
    the within-row spread (log-log, the diagonal is a perfect prediction); written to ``path``
    (PNG or SVG by its suffix)."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(EMPIRICAL_PANELS), figsize=(11, 4.6))
    for axis, (quantity, measured_name, title) in zip(axes, EMPIRICAL_PANELS):
        measured = [getattr(r.measured, measured_name) for r in report.heads]
        hidden = sum(1 for value in measured if value <= 0)  # a log scale cannot show them
        for n, first in enumerate(report.heads[0].predictions):
            points = [(x, getattr(r.predictions[n], quantity))
                      for x, r in zip(measured, report.heads)]
            if any(y is None for _, y in points):
                continue
            points = [(x, y) for x, y in points if x > 0 and y > 0]
            # a marker of its own per model: the i.i.d. models' points often coincide
            axis.scatter([x for x, _ in points], [y for _, y in points], s=18, alpha=0.75,
                         label=first.label, marker="osx^D"[n % 5],
                         facecolors="none" if n % 5 == 1 else None)
        shown = [value for value in measured if value > 0] or [1.0]
        if hidden:
            axis.annotate(f"{hidden} head(s) at 0 not shown", (0.02, 0.02),
                          xycoords="axes fraction", fontsize=8)
        low, high = min(shown) / 3, max(shown) * 3
        axis.plot([low, high], [low, high], color="black", linewidth=0.8)
        axis.set(xscale="log", yscale="log", xlabel="measured", ylabel="predicted",
                 title=title)
        axis.legend(fontsize=8)
    figure.suptitle(f"{report.model}, {len(report.heads)} heads, {report.corpus}", fontsize=10)
    figure.tight_layout()
    # drawn beside its destination and renamed: a failed run leaves no half-written figure
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.",
                                         suffix=path.suffix)
    os.close(handle)
    try:
        figure.savefig(temporary, dpi=110,
                       metadata={"Date": None} if path.suffix == ".svg" else None)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    finally:
        plt.close(figure)
    return path


FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def figure_problem(path: Path) -> str | None:
    """Why no figure can be drawn to ``path`` (its suffix, or no matplotlib), or None."""
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        return f"{path}: a figure is written as {', '.join(FIGURE_SUFFIXES)} (by its suffix)"
    try:
        _pyplot()
    except PlottingUnavailable as error:
        return str(error)
    return None
