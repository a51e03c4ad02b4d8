"""An entropy floor from the logits' range: if max z - min z <= R, then
H(p) >= min over 0 <= t <= n of [log(t e^R + n - t) - t R e^R / (t e^R + n - t)],
the entropy with t logits at the top of the range and n - t at the bottom (t = 0 and t = n give
log n, the largest value, so the minimum is over 1 <= t < n once n >= 2).

Why the worst case is a corner (the step's rule, a rule of this file, assumes it; the checks
search the corners for a counterexample): softmax ignores a common shift, so take z in [0, R]^n.
dH/dz_j = -p_j (z_j - zbar) with zbar = sum_i p_i z_i, and z_j - zbar crosses 0 only upwards as
z_j grows (its derivative there is 1 - p_j > 0).  So H rises then falls in each logit: it is
quasi-concave in each z_j, and moving the logits one at a time to an end of [0, R] never raises
it.  The minimiser is not one logit at the top: at n = 64 and R = 2 it puts 13 there
(seed_audit/entropy_floor_one_key.py refutes the one-logit version).
"""

from sympy import Ge, Symbol, exp, log

from sdpa_proofs import BoundRule, Derivation, MaxOver, Step, logit_range, n, softmax_entropy

R = logit_range
top = Symbol("t", integer=True, nonnegative=True)  # how many logits sit at the top
at_corner = log(top * exp(R) + n - top) - top * R * exp(R) / (top * exp(R) + n - top)
floor = -MaxOver(-at_corner, (top, 0, n))  # min over t = 0..n


class CornerMinimum(BoundRule):
    """H >= its smallest value at the corners of [0, R]^n (an assumption of this file)."""

    name = "corner_minimum"
    fact = "H(softmax(z)) is quasi-concave in each z_j: over [0, R]^n it is least at a corner"
    latex = r"$H$ is quasi-concave in each $z_j$: least at a corner of $[0, R]^n$"

    def bounds(self, node, ranges, maxima):
        if node == softmax_entropy:
            yield floor, "lower"


derivation = Derivation(
    title="Logits within a range R keep the entropy above its value at the worst corner",
    claim=Ge(softmax_entropy, floor),
    models=["uniform-logits"],
    steps=[Step(floor, CornerMinimum(), "each logit moved to an end of $[0, R]$ lowers $H$",
                rel=">=")],
)
