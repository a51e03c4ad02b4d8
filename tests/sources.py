"""Small derivation files that several tests write to disk."""

GOOD = '''
from sympy import Eq, Sum
from sdpa_proofs import Derivation, E, Step, d, i, k, q

mean = Derivation(
    claim=Eq(E(Sum(q[i] * k[i], (i, 1, d))), 0),
    models=["independent-normal"],
    steps=[Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity"),
           Step(Sum(E(q[i]) * E(k[i]), (i, 1, d)), "independence"),
           Step(0, "zero_mean")])
'''

# dividing by d but forgetting to square 1/d: wrong at step 1, where d = 2 tells the sides apart
WRONG_STEP = '''
from sympy import Eq, Sum
from sdpa_proofs import Derivation, E, S, Step, Var, d, dot_product, sigma_k, sigma_q

too_big = Derivation(
    claim=Eq(Var(S / d), sigma_q**2 * sigma_k**2),
    where={S: dot_product},
    models=["independent-normal"],
    steps=[Step(Var(S) / d, "variance_scaling", "forgot to square 1/d"),
           Step(sigma_q**2 * sigma_k**2, "algebra")])
'''


def write(folder, name: str, source: str):
    """Write a derivation source (dedented) to folder/name and return the path."""
    import textwrap

    path = folder / name
    path.write_text(textwrap.dedent(source))
    return path
