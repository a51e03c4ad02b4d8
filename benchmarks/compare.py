"""Side by side: this toolkit against what users run today, on the same questions.

    python benchmarks/compare.py [--runs 3] [--limit 30] [--out benchmarks/results]

prints a table and writes results.md and results.json:

- sympy.stats E[S] and Var(S) for Normal coordinates at d = 1 .. 10 (symbolic sigma and
  sigma = 1), each in a subprocess under a time limit (a time-out is recorded as such), and
  whether its answer is right; this toolkit on the same claims: the proof for symbolic d (once,
  for every d), the exact value at concrete d, and the full check of the derivation;
- plain nested mpmath.quad against the toolkit's Gauss quadrature for the same moments at 30
  and 50 digits: time and the digits actually achieved;
- the numeric check's tensor Gauss sum in mpmath against python-flint's arb balls (the `bench`
  extra), on the same nodes: time, agreement and arb's certified radius;
- Monte Carlo: samples of S per second at d = 64, 512, 4096 against the machine's limit (NumPy
  normal generation plus the product), measured in the same run;
- moment questions (E[S^2] with correlated pairs, Var(S) with a shared factor): the toolkit's
  closed form for every d against sympy.stats at d = 2 and 4, and whether sympy.stats agrees;
- the targets of issue 11, each marked met or not.

Times are medians of --runs runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from itertools import product
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIMENSIONS = (1, 2, 3, 4, 6, 8, 10)
EXACT_DIMENSIONS = (4, 10, 64, 4096)  # the exact value of Var(S) from the one proof, at these d

SYMPY_STATS = """
import sys, time
from sympy import Rational, Symbol, simplify
from sympy.stats import E, Normal, variance
d, which, symbolic = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
sq = Symbol("sigma_q", positive=True) if symbolic else 1
sk = Symbol("sigma_k", positive=True) if symbolic else 1
qs = [Normal(f"q{n}", 0, sq) for n in range(d)]
ks = [Normal(f"k{n}", 0, sk) for n in range(d)]
S = sum(a * b for a, b in zip(qs, ks))
start = time.perf_counter()
value = E(S) if which == "E" else variance(S)
seconds = time.perf_counter() - start
expected = 0 if which == "E" else d * sq**2 * sk**2
print(seconds, simplify(value - expected) == 0)
"""


# The same moment questions asked of sympy.stats, its coordinates built from independent
# Normals at the toolkit model's first parameter point (numbers: sympy.stats hangs on a symbolic
# correlation).  The answer is printed with srepr for the parent to compare exactly.
SYMPY_QUESTIONS = """
import sys, time
from sympy import Rational, sqrt, srepr
from sympy.stats import E, Normal, variance
question, d = sys.argv[1], int(sys.argv[2])
sq, sk, rho, a, b = Rational(3, 7), Rational(5, 4), Rational(2, 5), Rational(2, 3), Rational(5, 7)
u = [Normal(f"u{n}", 0, 1) for n in range(d)]
w = [Normal(f"w{n}", 0, 1) for n in range(d)]
if question == "correlated":  # E[S^2] under correlated-normal
    qs = [sq * x for x in u]
    ks = [sk * (rho * x + sqrt(1 - rho**2) * y) for x, y in zip(u, w)]
else:  # Var(S) under shared-factor: one z shared by every coordinate of q and k
    z = Normal("z", 0, 1)
    qs = [a * z + sq * x for x in u]
    ks = [b * z + sk * y for y in w]
S = sum(x * y for x, y in zip(qs, ks))
start = time.perf_counter()
value = E(S**2) if question == "correlated" else variance(S)
print(time.perf_counter() - start, srepr(value.simplify()))
"""
QUESTIONS = {"correlated": ("E[S**2]", "correlated-normal"), "shared": ("Var(S)", "shared-factor")}


def moment_rows(runs: int, limit: float, dims=(2, 4)) -> list[dict]:
    """The toolkit's moment() (closed form for every d) against sympy.stats at concrete d on
    the same questions, and whether sympy.stats' answer equals the closed form at that d."""
    from sympy import sympify

    from sdpa_proofs import moment

    rows = []
    for key, (question, model) in QUESTIONS.items():
        ours = median_time(lambda q=question, m=model: moment(q, m), runs)
        for dim in dims:
            expected = moment(question, model, d=dim).value
            row = {"question": f"{question} under {model}", "d": dim, "toolkit seconds": ours}
            try:
                done = subprocess.run([sys.executable, "-c", SYMPY_QUESTIONS, key, str(dim)],
                                      capture_output=True, text=True, timeout=limit)
                seconds, value = done.stdout.split(maxsplit=1)
                row.update({"sympy.stats seconds": float(seconds),
                            "right": bool(sympify(value) == expected)})
            except subprocess.TimeoutExpired:
                row.update({"sympy.stats seconds": None, "right": None, "timeout": limit})
            except ValueError:
                row.update({"sympy.stats seconds": None, "right": False})
            rows.append(row)
    return rows


def median_time(f, runs: int) -> float:
    return timed_runs(f, runs)[1]


def timed_runs(f, runs: int) -> tuple:
    """(what the last of ``runs`` calls of f returned, the median of their seconds)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        value = f()
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def sympy_stats(d: int, which: str, symbolic: bool, limit: float) -> dict:
    """One sympy.stats answer in a subprocess, killed at the limit."""
    try:
        done = subprocess.run([sys.executable, "-c", SYMPY_STATS, str(d), which,
                               "1" if symbolic else "0"], capture_output=True, text=True,
                              timeout=limit)
        seconds, right = done.stdout.split()
        return {"seconds": float(seconds), "right": right == "True"}
    except subprocess.TimeoutExpired:
        return {"seconds": None, "right": None, "timeout": limit}
    except ValueError:
        return {"seconds": None, "right": False, "error": done.stderr.strip()[-200:]}


def toolkit_rows(runs: int) -> dict:
    """The symbolic-d proof (rule and exact checks of variance.py), the exact value at concrete
    d, and the whole check of the derivation."""
    from sympy import Integer

    from sdpa_proofs import VerifySettings, get_model, load_paths, verify_derivation
    from sdpa_proofs.exactcheck import exact_check
    from sdpa_proofs.expressions import Var, unfold
    from sdpa_proofs.moments import ExactEvaluator
    from sdpa_proofs.registry import resolve
    from sdpa_proofs.rulecheck import rule_check
    from sdpa_proofs.symbols import d, dot_product

    (variance,) = load_paths([str(ROOT / "derivations" / "variance.py")])
    model = get_model("independent-normal")
    where = variance.where

    def proof():
        for previous, step in variance.chain():
            before, after = unfold(previous, where), unfold(step.expr, where)
            rules = [r.unfolded(where) for r in resolve(step.by)]
            rule_check(before, after, rules, model)
            exact_check(before, after, model)

    rows = {"proof for every d (rule + exact checks)": median_time(proof, runs)}
    for dim in EXACT_DIMENSIONS:
        def exact(dim=dim):  # the closed form for every d, then d = dim: one computation
            return ExactEvaluator(model).value(Var(dot_product)).xreplace({d: Integer(dim)})
        rows[f"exact Var(S) at d = {dim}"] = median_time(exact, runs)
    settings = VerifySettings(models=["independent-normal"], monte_carlo=False)
    rows["full check of variance.py (no Monte Carlo)"] = median_time(
        lambda: verify_derivation(variance, settings), max(1, runs // 2))
    return rows


def quadrature_rows(runs: int) -> list[dict]:
    """E[q_1^2 k_1^2] (2-D) and E[q_1^4] (1-D) for independent Normals: mpmath.quad against the
    toolkit's Gauss rule, at 30 and 50 digits."""
    import mpmath
    from sympy import Rational

    from sdpa_proofs import E, get_model, k, q, sigma_k, sigma_q
    from sdpa_proofs.numeric import _Evaluation

    model = get_model("independent-normal")
    sq, sk = Rational(3, 7), Rational(5, 4)
    cases = {"E[q_1^4]": (q[1]**4, 3 * sq**4), "E[q_1^2 k_1^2]": (q[1]**2 * k[1]**2, sq**2 * sk**2)}
    rows = []
    for digits in (30, 50):
        for label, (integrand, exact) in cases.items():
            with mpmath.workdps(digits + 5):
                truth = mpmath.mpf(exact.p) / exact.q

                def toolkit(digits=digits, integrand=integrand):
                    point = model.concrete({sigma_q: sq, sigma_k: sk}, 1)
                    return _Evaluation(model, point, digits + 5).value(E(integrand))

                def plain(label=label):
                    density = lambda x, s: mpmath.npdf(x, 0, s)  # noqa: E731
                    a, b = (mpmath.mpf(x.p) / x.q for x in (sq, sk))
                    if label == "E[q_1^4]":
                        return mpmath.quad(lambda x: x**4 * density(x, a), [-mpmath.inf,
                                                                            mpmath.inf])
                    return mpmath.quad(lambda x, y: x**2 * y**2 * density(x, a) * density(y, b),
                                       [-mpmath.inf, mpmath.inf], [-mpmath.inf, mpmath.inf])

                for method, f in (("toolkit Gauss rule", toolkit), ("mpmath.quad", plain)):
                    # nested mpmath.quad takes minutes in two dimensions: timed once
                    value, seconds = timed_runs(f, runs if method.startswith("t") else 1)
                    error = abs(value - truth)
                    achieved = float(min(digits + 5, -mpmath.log10(error / truth)) if error
                                     else digits + 5)
                    rows.append({"moment": label, "digits asked": digits, "method": method,
                                 "seconds": seconds, "digits achieved": round(achieved, 1)})
    return rows


def arb_rows(runs: int, dps: int = 48) -> list[dict]:
    """The numeric check's inner loop, a tensor Gauss sum, in mpmath (the toolkit's own
    tensor_sum) against python-flint's arb balls on the same nodes and weights: a softmax
    probability over three Normal logits (32 nodes per axis) and E[q_1^2 k_1^2 q_2^2 k_2^2]
    over four (16 per axis).  Seconds, the digits on which the two agree, and the radius arb
    certifies for its own sum (the rule's error is not in it: the nodes enter as exact)."""
    import mpmath

    from sdpa_proofs.distributions import NORMAL
    from sdpa_proofs.models import tensor_sum
    try:
        import flint
    except ImportError:
        return [{"integrand": "(python-flint not installed: pip install -e '.[bench]')"}]

    def softmax(a, b, c, exp):
        return exp(a) / (exp(a) + exp(b) + exp(c))

    def product_of_squares(a, b, c, e, exp):
        return (a * b * c * e) ** 2

    cases = {"softmax p_1 of 3 logits, 32^3 points": (softmax, 3, 32),
             "E[q1^2 k1^2 q2^2 k2^2], 16^4 points": (product_of_squares, 4, 16)}
    rows = []
    flint.ctx.prec = int(dps * 3.33) + 10
    for label, (integrand, axes, points) in cases.items():
        rule = NORMAL.rule(points, mpmath.mpf(1), dps)
        balls = [(flint.arb(mpmath.nstr(w, dps + 10)), flint.arb(mpmath.nstr(x, dps + 10)))
                 for w, x in rule]

        def in_mpmath(rule=rule, integrand=integrand, axes=axes):
            with mpmath.workdps(dps):
                return tensor_sum(lambda *values: integrand(*values, exp=mpmath.exp),
                                  [rule] * axes)[0]

        def in_arb(balls=balls, integrand=integrand, axes=axes):
            total = flint.arb(0)
            for combination in product(*[balls] * axes):
                weight = flint.arb(1)
                for w, _ in combination:
                    weight *= w
                total += weight * integrand(*(x for _, x in combination), exp=flint.arb.exp)
            return total

        (ours, mp_seconds), (theirs, arb_seconds) = (timed_runs(in_mpmath, runs),
                                                      timed_runs(in_arb, runs))
        with mpmath.workdps(dps):
            gap = abs(ours - mpmath.mpf(theirs.mid().str(dps + 10, radius=False)))
            agree = float(min(dps, -mpmath.log10(gap / abs(ours)))) if gap else float(dps)
        rows.append({"integrand": label, "digits": dps, "mpmath seconds": mp_seconds,
                     "arb seconds": arb_seconds, "ratio": mp_seconds / arb_seconds,
                     "digits agreeing": round(agree, 1),
                     "arb radius": theirs.rad().str(3, radius=False)})
    return rows


def monte_carlo_rows(runs: int) -> list[dict]:
    """Samples of S per second through the toolkit's sampler and estimator, against NumPy's
    normal generation plus the row-wise product (the limit for these sizes)."""
    import numpy as np
    from sympy import Eq

    from sdpa_proofs import Var, d, get_model, sigma_k, sigma_q
    from sdpa_proofs.montecarlo import check_claim, samples_for
    from sdpa_proofs.symbols import dot_product

    model = get_model("independent-normal")
    claim = Eq(Var(dot_product), d * sigma_q**2 * sigma_k**2)
    rows = []
    for dim in (64, 512, 4096):
        n = samples_for(dim)

        def limit(n=n, dim=dim):
            rng = np.random.default_rng(1)
            a, b = rng.standard_normal((n, dim)), rng.standard_normal((n, dim))
            return np.einsum("ij,ij->i", a, b)

        def toolkit(dim=dim):  # draws in chunks, nothing kept from one run to the next
            return check_claim(claim, model, dims=(dim,))

        machine, ours = median_time(limit, runs), median_time(toolkit, runs)
        rows.append({"d": dim, "samples": n, "limit samples/s": n / machine,
                     "toolkit samples/s": n / ours, "ratio": ours / machine})
    return rows


def catalogue_rows(runs: int) -> dict:
    """`sdpa-proofs verify` on the bundled catalogue, with and without Monte Carlo: median wall
    seconds of ``runs`` runs, the CPU its processes used (user and kernel, from the children's
    rusage), and whether every run exited 0; a run that failed verifies nothing, so its time
    meets no target."""
    rows = {}
    for label, flags in (("with Monte Carlo", []), ("without Monte Carlo", ["--no-monte-carlo"])):
        walls, cpus, passed = [], [], True
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "sdpa_proofs", "verify",
                                   str(ROOT / "derivations"), *flags], capture_output=True,
                                  check=False)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            passed = passed and done.returncode == 0
        rows[label] = {"wall seconds": statistics.median(walls), "fastest": min(walls),
                       "cpu seconds": statistics.median(cpus), "exit 0": passed}
    return rows


def machine_speed(runs: int) -> dict:
    """Two yardsticks of the machine, measured in the same run as everything else: the
    machine's speed moves by a factor of 3 from one day to the next (docs/benchmarks.md), and
    a time means little without them.  A pure-Python loop (what SymPy and mpmath spend their
    time in) and NumPy drawing 10^7 normals (what Monte Carlo spends its time in)."""
    import numpy as np

    def loop():
        total = 0
        for i in range(10**7):
            total += i

    rng = np.random.Generator(np.random.SFC64(0))
    return {"Python loop, 10^7 additions": median_time(loop, runs),
            "NumPy, 10^7 normals": median_time(lambda: rng.standard_normal(10**7), runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=float, default=30.0,
                        help="seconds allowed to each sympy.stats answer")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()

    stats = {f"{which} d={dim} {'symbolic' if symbolic else 'sigma=1'}":
             sympy_stats(dim, which, symbolic, args.limit)
             for which in ("E", "Var") for symbolic in (True, False) for dim in DIMENSIONS}
    ours = toolkit_rows(args.runs)
    questions = moment_rows(args.runs, args.limit)
    quadrature = quadrature_rows(args.runs)
    arb = arb_rows(args.runs)
    sampling = monte_carlo_rows(args.runs)
    catalogue = catalogue_rows(args.runs)
    machine = machine_speed(args.runs)
    slowest = max((v["seconds"] or args.limit) for v in stats.values())
    at_d = [ours[f"exact Var(S) at d = {dim}"] for dim in EXACT_DIMENSIONS]
    whole = catalogue["with Monte Carlo"]
    targets = {
        "catalogue verified in under 10 s wall": whole["exit 0"] and whole["wall seconds"] < 10,
        # one proof with no d in it: its value at any d is the closed form with d put in
        "symbolic-d proof cost independent of d (d = 4 .. 4096 within 3x)":
            max(at_d) <= 3 * min(at_d),
        "exact concrete value at d = 64 in under 1 s": ours["exact Var(S) at d = 64"] < 1,
        "slowest sympy.stats claim at least 100x slower than the proof":
            slowest >= 100 * ours["proof for every d (rule + exact checks)"],
        "Monte Carlo within 1.5x of the generation-plus-product limit":
            all(r["ratio"] <= 1.5 for r in sampling),
    }
    results = {"sympy.stats": stats, "toolkit": ours, "moment questions": questions,
               "quadrature": quadrature, "arb against mpmath": arb,
               "monte carlo": sampling, "catalogue": catalogue, "machine": machine,
               "targets": targets}
    report = render(results)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.md").write_text(report + "\n")
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")


def render(results: dict) -> str:
    lines = ["## sympy.stats (subprocess, time limit)", "", "| question | seconds | right |",
             "| --- | --- | --- |"]
    for name, row in results["sympy.stats"].items():
        seconds = f"{row['seconds']:.2f}" if row["seconds"] is not None else \
            f"timeout ({row.get('timeout', '?')} s)" if "timeout" in row else "error"
        lines.append(f"| {name} | {seconds} | {row['right']} |")
    lines += ["", "## this toolkit", "", "| what | seconds |", "| --- | --- |"]
    lines += [f"| {name} | {seconds:.3f} |" for name, seconds in results["toolkit"].items()]
    lines += ["", "## moment questions: moment() for every d against sympy.stats at d", "",
              "| question | d | toolkit seconds (every d) | sympy.stats seconds | right |",
              "| --- | --- | --- | --- | --- |"]
    for r in results["moment questions"]:
        theirs = f"{r['sympy.stats seconds']:.2f}" if r["sympy.stats seconds"] is not None \
            else f"timeout ({r['timeout']} s)" if "timeout" in r else "error"
        lines.append(f"| {r['question']} | {r['d']} | {r['toolkit seconds']:.3f} | {theirs} | "
                     f"{r['right']} |")
    lines += ["", "## quadrature", "", "| moment | digits asked | method | seconds | digits "
              "achieved |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['moment']} | {r['digits asked']} | {r['method']} | {r['seconds']:.3f} | "
              f"{r['digits achieved']} |" for r in results["quadrature"]]
    lines += ["", "## the numeric check's tensor sum: mpmath against python-flint's arb", "",
              "| integrand | digits | mpmath seconds | arb seconds | ratio | digits agreeing | "
              "arb radius |", "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['integrand']} | {r['digits']} | {r['mpmath seconds']:.3f} | "
              f"{r['arb seconds']:.3f} | {r['ratio']:.1f} | {r['digits agreeing']} | "
              f"{r['arb radius']} |" if "digits" in r else f"| {r['integrand']} | | | | | | |"
              for r in results["arb against mpmath"]]
    lines += ["", "## Monte Carlo", "", "| d | samples | limit samples/s | toolkit samples/s | "
              "ratio |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['d']} | {r['samples']} | {r['limit samples/s']:.0f} | "
              f"{r['toolkit samples/s']:.0f} | {r['ratio']:.2f} |" for r in results["monte carlo"]]
    lines += ["", "## the catalogue (`sdpa-proofs verify`, median of the runs)", "",
              "| run | wall seconds | fastest | CPU seconds | exit 0 |",
              "| --- | --- | --- | --- | --- |"]
    lines += [f"| {label} | {r['wall seconds']:.1f} | {r['fastest']:.1f} | "
              f"{r['cpu seconds']:.1f} | {r['exit 0']} |"
              for label, r in results["catalogue"].items()]
    lines += ["", "## the machine, in the same run", "", "| yardstick | seconds |",
              "| --- | --- |"]
    lines += [f"| {name} | {seconds:.2f} |" for name, seconds in results["machine"].items()]
    lines += ["", "## targets", ""]
    lines += [f"- [{'x' if met else ' '}] {name}" for name, met in results["targets"].items()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
