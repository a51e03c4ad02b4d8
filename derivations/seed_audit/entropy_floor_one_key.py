"""The tempting entropy floor: with logits in a range R, the least spread-out softmax has one
logit at the top and the others at the bottom, so H >= log(e^R + n - 1) - R e^R / (e^R + n - 1).

Refuted: several logits at the top give less entropy from n = 8 on (n = 8, R = 2: two at the top
give 1.6114 nats against 1.6394 for one; at n = 64 the worst corner has 13 at the top and lies
0.36 nats below).  It holds for n <= 7, and random logits rarely show it: the corners of the
range do.  softmax/entropy_floor.py states the floor that holds, the minimum over every corner.
"""

from sympy import Ge, exp, log

from sdpa_proofs import Derivation, Step, logit_range, n, softmax_entropy

R = logit_range
one_at_the_top = log(exp(R) + n - 1) - R * exp(R) / (exp(R) + n - 1)

derivation = Derivation(
    title="Seed audit: the entropy floor from one logit at the top of the range (refuted)",
    claim=Ge(softmax_entropy, one_at_the_top),
    models=["uniform-logits"],
    steps=[Step(one_at_the_top, "range", "the extreme case: one logit at $R$, the rest at $0$",
                rel=">=")],
    expect_refuted_at=1,
)
