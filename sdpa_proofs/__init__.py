"""sdpa-proofs: machine-checked derivations of why attention divides by sqrt(d_k).

Write a derivation as a claim and a chain of steps, each justified by named rules; the toolkit
checks every step by rule, by exact moments for symbolic d, and by high-precision integration,
and backs the claim by Monte Carlo.
"""

from .bounds import BoundRule
from .citations import cite
from .derivation import DEFAULT_MODELS, Derivation, Step
from .distributions import FAMILIES, LAPLACE, NORMAL, RADEMACHER, UNIFORM, Family
from .exactcheck import exact_check
from .expressions import SD, Cov, E, MaxOver, RandomVector, SumOverDistinct, SymmetricMatrix, Var
from .isolation import load_paths, verify_paths
from .models import (
                     DEPENDENT,
                     INDEPENDENT,
                     MODELS,
                     GaussianMatrixModel,
                     Latent,
                     LatentLinearModel,
                     Model,
                     Sigma_kk,
                     Sigma_qk,
                     Sigma_qq,
                     aligned,
                     alpha,
                     beta,
                     correlated,
                     gaussian,
                     get_model,
                     independent,
                     m_k,
                     m_q,
                     mu_k,
                     mu_q,
                     rho,
                     shared_factor,
)
from .moments import ExactEvaluator
from .numeric import NumericSettings, numeric_check
from .registry import RULES
from .report import RunReport
from .rulecheck import rule_check
from .rules import Rule, lemma
from .runner import VerifySettings, verify_derivation
from .symbols import (
                     P,
                     S,
                     d,
                     dot_product,
                     i,
                     j,
                     k,
                     l,
                     m,
                     n,
                     p,
                     p_max,
                     q,
                     s,
                     sigma_k,
                     sigma_q,
                     softmax_abbreviations,
                     softmax_p,
                     z,
)
from .verdicts import Verdict

__version__ = "0.1.0"

__all__ = [
    "Derivation", "Step", "DEFAULT_MODELS", "E", "Var", "SD", "Cov", "SumOverDistinct",
    "RandomVector", "lemma",
    "q", "k", "d", "i", "j", "sigma_q", "sigma_k", "S", "dot_product",
    "z", "n", "s", "m", "l", "softmax_p", "p_max", "MaxOver", "BoundRule",
    "p", "P", "softmax_abbreviations", "cite",
    "Model", "LatentLinearModel", "Latent", "independent", "aligned", "correlated",
    "shared_factor", "INDEPENDENT", "DEPENDENT", "MODELS", "get_model",
    "rho", "mu_q", "mu_k", "alpha", "beta", "GaussianMatrixModel", "gaussian",
    "Sigma_qq", "Sigma_kk", "Sigma_qk", "m_q", "m_k", "SymmetricMatrix",
    "Family", "FAMILIES", "NORMAL", "UNIFORM", "RADEMACHER", "LAPLACE",
    "Rule", "RULES", "ExactEvaluator", "Verdict", "NumericSettings",
    "rule_check", "exact_check", "numeric_check",
    "VerifySettings", "verify_derivation", "verify_paths", "load_paths", "RunReport",
]
