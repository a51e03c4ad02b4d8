"""Where the time of `sdpa-proofs verify` goes, on the bundled catalogue.

    python benchmarks/timing.py [--sympy-stats]

prints a table: import, symbolic checks (rule + exact engine), numerical integration and
Monte Carlo; with --sympy-stats also the sympy.stats baseline for Var(S) at small d.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(f, *args) -> float:
    start = time.perf_counter()
    f(*args)
    return time.perf_counter() - start


def import_time() -> float:
    code = ("import time; t = time.perf_counter(); from sdpa_proofs import verify_paths; "
            "print(time.perf_counter() - t)")  # the package is lazy: import the engine
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def split_times() -> dict[str, float]:
    from sdpa_proofs.allocator import keep_freed_memory
    from sdpa_proofs.exactcheck import exact_check
    from sdpa_proofs.expressions import unfold
    from sdpa_proofs.isolation import load_paths
    from sdpa_proofs.models import resolve_models
    from sdpa_proofs.montecarlo import check_claims
    from sdpa_proofs.numeric import NumericSettings, numeric_check
    from sdpa_proofs.registry import resolve
    from sdpa_proofs.rulecheck import rule_check
    from sdpa_proofs.runner import unfolded_claim

    totals = {"rule check": 0.0, "exact engine": 0.0, "numeric (mpmath)": 0.0, "Monte Carlo": 0.0}
    claims = []
    for derivation in load_paths([str(ROOT / "derivations")]):
        where = derivation.where
        for model in resolve_models(derivation.models):
            for previous, step in derivation.chain():
                before, after = unfold(previous, where), unfold(step.expr, where)
                rules = [r.unfolded(where) for r in resolve(step.by)]
                distinct, relation = derivation.distinct, step.rel
                totals["rule check"] += timed(rule_check, before, after, rules, model,
                                              distinct, relation)
                totals["exact engine"] += timed(exact_check, before, after, model, distinct,
                                                relation)
                totals["numeric (mpmath)"] += timed(numeric_check, before, after, model,
                                                    NumericSettings(), distinct, relation)
            claims.append((model.name, unfolded_claim(derivation), model))
    # all claims from one stream of draws, with the allocator's settings of a sampler
    keep_freed_memory()
    totals["Monte Carlo"] += timed(check_claims, [(claim, model) for _, claim, model in claims])
    return totals


def sympy_stats_baseline(dimensions=(2, 4)) -> dict[str, float]:
    from sympy import Rational
    from sympy.stats import Normal, variance

    times = {}
    for dim in dimensions:
        qs = [Normal(f"q{n}", 0, Rational(3, 7)) for n in range(dim)]
        ks = [Normal(f"k{n}", 0, Rational(5, 4)) for n in range(dim)]
        dot = sum(a * b for a, b in zip(qs, ks))
        times[f"sympy.stats Var(S), d = {dim}"] = timed(variance, dot)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sympy-stats", action="store_true", help="also time the baseline")
    args = parser.parse_args()
    rows = {"import sdpa_proofs": import_time(), **split_times()}
    if args.sympy_stats:
        rows.update(sympy_stats_baseline())
    width = max(map(len, rows))
    print(f"{'phase':<{width}}  seconds")
    print(f"{'-' * width}  -------")
    for name, seconds in rows.items():
        print(f"{name:<{width}}  {seconds:7.2f}")


if __name__ == "__main__":
    main()
