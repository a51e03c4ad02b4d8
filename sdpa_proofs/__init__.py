"""sdpa-proofs: machine-checked derivations of why attention divides by sqrt(d_k).

Write a derivation as a claim and a chain of steps, each justified by named rules; the toolkit
checks every step by rule, by exact moments for symbolic d, and by high-precision integration,
and backs the claim by Monte Carlo.
"""

import importlib

__version__ = "0.1.0"

# The public API, by the module that holds each name.  Imported on first use (PEP 562), so
# that `sdpa-proofs --help` and a pytest run that never collects a derivation stay fast.
_EXPORTS = {
    "arrays": ("array_value",),
    "bounds": ("BoundRule",),
    "citations": ("cite",),
    "derivation": ("DEFAULT_MODELS", "Derivation", "Step"),
    "distributions": ("FAMILIES", "Family", "LAPLACE", "NORMAL", "RADEMACHER", "UNIFORM"),
    "empirical": ("EmpiricalReport", "measure_model", "read_corpus", "run_empirical"),
    "exactcheck": ("exact_check",),
    "expressions": ("Cov", "E", "Expectation", "MaxOver", "RandomVector", "SD", "SumOverDistinct",
                    "SymmetricMatrix", "Var"),
    "isolation": ("load_paths", "verify_paths"),
    "limits": ("Lim",),
    "models": ("DEPENDENT", "GaussianMatrixModel", "INDEPENDENT", "Latent", "LatentLinearModel",
               "MODELS", "Model", "Sigma_kk", "Sigma_qk", "Sigma_qq", "aligned", "alpha", "beta",
               "correlated", "from_covariance", "gaussian", "get_model", "independent",
               "logit_range", "m_k", "m_q",
               "mu_k", "mu_q", "query_value", "rho", "row_models", "shared_factor", "sigma_w",
               "uniform_logits", "x", "y"),
    "measurements": ("HeadMeasurement", "measure_head"),
    "moments": ("ExactEvaluator",),
    "numeric": ("NumericSettings", "numeric_check"),
    "predictions": ("Prediction", "predict"),
    "questions": ("Answer", "moment", "parse_question", "read_srepr"),
    "registry": ("RULES",),
    "report": ("RunReport",),
    "rulecheck": ("rule_check",),
    "rules": ("Rule", "lemma"),
    "runner": ("VerifySettings", "verify_derivation"),
    "symbols": ("P", "S", "S_qk", "S_tilde", "d", "dot_product", "i", "j", "k", "ktilde", "l", "m",
                "n", "other_dot_product", "p", "p_max", "q", "s", "sigma_k", "sigma_q",
                "softmax_abbreviations", "softmax_entropy", "softmax_p", "z"),
    "verdicts": ("Verdict",),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'sdpa_proofs' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_HOME))


__all__ = [*_HOME, "__version__"]
