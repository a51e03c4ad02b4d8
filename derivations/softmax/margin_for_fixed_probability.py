"""Length: with one key ahead by a margin Delta, a fixed attention probability needs a scale
lambda that grows like log n.

Logits lambda (Delta + c) for the key ahead and lambda c for n others give that key
p* = e^{lambda Delta} / (e^{lambda Delta} + n) = 1 / (1 + n e^{-lambda Delta}).  Taking
lambda = log(n p / (1 - p)) / Delta makes p* = p for every n, and no lambda fixed in n does:
this is the log n scaling of length-aware softmax (e.g. "log n attention scaling").
The claim is an identity in the logits (it holds at every point, whatever their law), checked at
logits drawn from the model and by SymPy.
"""

from sympy import Eq, Symbol, exp, log

from sdpa_proofs import Derivation, Step, n

margin = Symbol("Delta", positive=True)  # how far the key ahead is ahead
p = Symbol("pstar", positive=True)  # p*, the probability wanted for it (0 < p* < 1)
scale = log(n * p / (1 - p)) / margin  # lambda, growing like log n

derivation = Derivation(
    title="One key ahead of n others by Delta: p* = p for every n needs "
          "lambda = log(n p / (1 - p)) / Delta",
    claim=Eq(exp(scale * margin) / (exp(scale * margin) + n), p),
    models=["gaussian-logits"],
    steps=[
        Step(1 / (1 + n * exp(-scale * margin)), "algebra",
             "divide by $e^{\\lambda\\Delta}$"),
        Step(1 / (1 + n * (1 - p) / (n * p)), "algebra",
             "$e^{-\\lambda\\Delta} = (1 - p) / (n p)$"),
        Step(p, "algebra", "simplify"),
    ],
)
