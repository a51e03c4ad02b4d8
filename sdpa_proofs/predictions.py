"""What the toolkit's models predict for a measured head, and how far each is off.

Each model's parameters are set from the head's measured moments (the method of moments), and
its predictions are the moment API's closed forms at those parameters: the same exact engine
that checks the derivations, evaluated at d = the head dimension.  The general Gaussian takes
the measured mean vectors and covariance blocks whole, its closed forms (sums of matrix
entries: trace formulas) evaluated on them as arrays.

Three quantities are predicted:
- Var(S) and E[S^2] of a single logit S = q . k;
- the within-row spread, E[(S - S~)^2] / 2 for two keys k, k~ of one query's row: the part of
  the logits' variance that softmax sees.  For a key independent of its query (model
  gaussian-row) this is E[Var(S | q)] = E[S^2] - E[(q . m_k)^2].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np
import sympy as sp

from . import models
from .arrays import array_value
from .measurements import HeadMeasurement, PairMoments
from .models import LatentLinearModel, get_model
from .questions import moment

SINGLE = ("Var(S)", "E[S**2]")
ROW_PAIR = "E[(S - S_tilde)**2]/2"
ROW_GIVEN_QUERY = "E[S**2] - E[Sum(q[i]*m_k[i], (i, 1, d))**2]"


@dataclass(frozen=True)
class Prediction:
    """One model's predictions for one head; ``None`` where the model has nothing to say."""

    model: str
    label: str  # what the model says, in a few words
    short: str  # the label in a table's header
    fit: str  # how its parameters were set from the measurement
    parameters: dict[str, float] = field(default_factory=dict)
    variance: float | None = None  # Var(S)
    second_moment: float | None = None  # E[S^2]
    row_spread: float | None = None  # E[(S - S~)^2] / 2

    def ratios(self, measured: HeadMeasurement) -> dict[str, float | None]:
        """Predicted over measured, for each quantity predicted."""
        pairs = (("variance", self.variance, measured.logit_variance),
                 ("second_moment", self.second_moment, measured.second_moment),
                 ("row_spread", self.row_spread, measured.within_row_spread))
        return {name: (p / m if p is not None and m else None) for name, p, m in pairs}


@cache
def _closed_form(question: str, model_name: str, two_keys: bool = False) -> sp.Expr:
    model = get_model(model_name)
    if two_keys:
        assert isinstance(model, LatentLinearModel)
        model = model.with_second_key()
    return moment(question, model).closed_form


def _scalar_prediction(model_name: str, label: tuple[str, str], fit: str,
                       parameters: dict) -> Prediction:
    """Predictions of an i.i.d.-coordinate model at the given parameter values."""
    scalars = {_symbol(name): value for name, value in parameters.items()}
    variance, second = (array_value(_closed_form(question, model_name), {}, scalars, models.d)
                        for question in SINGLE)
    spread = array_value(_closed_form(ROW_PAIR, model_name, two_keys=True), {}, scalars,
                         models.d)
    return Prediction(model_name, *label, fit, parameters, variance, second, spread)


def _symbol(name: str) -> sp.Symbol:
    """The model parameter called ``name`` (sigma_q, rho, alpha, ...), or the dimension d."""
    return {str(s): s for s in (models.sigma_q, models.sigma_k, models.rho, models.mu_q,
                                models.mu_k, models.alpha, models.beta, models.d)}[name]


def independent_fit(measured: HeadMeasurement) -> Prediction:
    """Independent zero-mean coordinates: sigma^2 the mean of E[q_i^2] (and of E[k_i^2])."""
    m = measured.moments
    parameters = {"sigma_q": _sd(np.diag(m.second_qq)), "sigma_k": _sd(np.diag(m.second_kk)),
                  "d": measured.d}
    return _scalar_prediction("independent-normal", ("independent", "indep."),
                              "sigma^2 = mean_i E[v_i^2]", parameters)


def correlated_fit(measured: HeadMeasurement) -> Prediction:
    """Independent pairs (q_i, k_i) with correlation rho and common means mu_q, mu_k:
    sigma^2 the mean of Var(v_i), rho from the mean of Cov(q_i, k_i); mu_q the root mean square
    of the coordinates' means, and mu_k such that d mu_q mu_k = m_q . m_k, so that the model's
    E[S] = d (mu_q mu_k + rho sigma_q sigma_k) is the measured one."""
    m = measured.moments
    sigma_q, sigma_k = _sd(np.diag(m.sigma_qq)), _sd(np.diag(m.sigma_kk))
    varies = min(np.mean(np.diag(m.sigma_qq)), np.mean(np.diag(m.sigma_kk))) > VARIANCE_FLOOR
    rho = float(np.clip(np.mean(np.diag(m.sigma_qk)) / (sigma_q * sigma_k), -0.999, 0.999)) \
        if varies else 0.0  # nothing to correlate when q or k does not vary
    mu_q = float(np.sqrt(np.mean(m.m_q ** 2)))
    mu_k = float(m.m_q @ m.m_k) / (measured.d * mu_q) if mu_q > 0 else 0.0
    parameters = {"sigma_q": sigma_q, "sigma_k": sigma_k, "rho": rho, "mu_q": mu_q, "mu_k": mu_k,
                  "d": measured.d}
    return _scalar_prediction("correlated-normal-means", ("per-coordinate ρ", "ρᵢ"),
                              "sigma^2, rho: coordinate means of Var, Cov; mu: E[q_i]^2 and "
                              "m_q . m_k", parameters)


def factors_fit(measured: HeadMeasurement) -> Prediction:
    """q_i = alpha z + sigma_q e_i, k_i = beta z' + sigma_k f_i with z' independent of z
    (separate-factors: the query's token and the key's token each with a factor of its own,
    as the pair law has it for two tokens), mean 0: alpha^2 the mean of E[q_i q_j] over
    i != j, beta^2 that of E[k_i k_j], and sigma^2 what is left of the mean E[v_i^2].  A
    factor here loads on every coordinate alike."""
    m = measured.moments
    alpha = np.sqrt(max(_off_diagonal_mean(m.second_qq), 0.0))
    beta = np.sqrt(max(_off_diagonal_mean(m.second_kk), 0.0))
    parameters = {"alpha": float(alpha), "beta": float(beta),
                  "sigma_q": _sd(np.diag(m.second_qq) - alpha ** 2),
                  "sigma_k": _sd(np.diag(m.second_kk) - beta ** 2), "d": measured.d}
    return _scalar_prediction("separate-factors", ("separate factors", "factors"),
                              "alpha^2, beta^2 = mean_{i!=j} E[v_i v_j]", parameters)


def independent_vectors_fit(measured: HeadMeasurement) -> Prediction:
    """q and k independent, with the measured means and covariance blocks Sigma_qq, Sigma_kk
    (model gaussian-row, a key of the query's row independent of it).  For independent q, k
    these moments depend on the first and second moments alone, E[S^2] = tr(E[q q^T] E[k k^T]),
    whatever the law: what this leaves out is the dependence between q and k."""
    arrays = gaussian_arrays(measured.moments)
    variance, second, spread = (array_value(_closed_form(question, "gaussian-row"), arrays, {},
                                            models.d) for question in (*SINGLE, ROW_GIVEN_QUERY))
    return Prediction("gaussian-row", "q, k independent, measured Σ", "q ⟂ k",
                      "measured m_q, m_k, Sigma_qq, Sigma_kk; Sigma_qk = 0", {"d": measured.d},
                      variance, second, spread)


def gaussian_fit(measured: HeadMeasurement) -> Prediction:
    """(q, k) jointly Gaussian with the measured means and covariance blocks, Sigma_qk
    included (gaussian-means): Isserlis' theorem turns the fourth moments into products of
    these.  (The model has no second key, so no row spread.)"""
    arrays = gaussian_arrays(measured.moments)
    variance, second = (array_value(_closed_form(question, "gaussian-means"), arrays, {},
                                    models.d) for question in SINGLE)
    return Prediction("gaussian-means", "general Gaussian", "Gauss.",
                      "measured m_q, m_k, Sigma_qq, Sigma_kk, Sigma_qk", {"d": measured.d},
                      variance, second)


def gaussian_arrays(m: PairMoments) -> dict:
    """The general Gaussian models' parameters as arrays."""
    return {models.m_q: m.m_q, models.m_k: m.m_k, models.Sigma_qq: m.sigma_qq,
            models.Sigma_kk: m.sigma_kk, models.Sigma_qk: m.sigma_qk}


FITS = (independent_fit, correlated_fit, factors_fit, independent_vectors_fit, gaussian_fit)


def predict(measured: HeadMeasurement) -> list[Prediction]:
    """Every model's predictions for one head."""
    return [fit(measured) for fit in FITS]


VARIANCE_FLOOR = 1e-24  # a standard deviation the fit leaves at 0 stays a (tiny) positive one


def _sd(variances) -> float:
    """A model's standard deviation from variances: the root of their mean, kept positive as
    the models' sigma parameters are."""
    return float(np.sqrt(max(np.mean(variances), VARIANCE_FLOOR)))


def _off_diagonal_mean(matrix: np.ndarray) -> float:
    size = matrix.shape[0]
    if size < 2:
        return 0.0
    return float((matrix.sum() - np.trace(matrix)) / (size * (size - 1)))
