"""What one attention head's queries and keys measure on a corpus.

A head sees each sequence (a row of attention per token) on its own: the logits are
S_ab = q_a . k_b for tokens a, b of the same sequence.  The empirical law of (q, k) here is
the uniform law over those pairs (a, b), so every moment below (E[S], Var(S), Cov(q_i, k_j),
...) is a moment of that one law, and the identities the toolkit proves for a law hold for it
exactly.  Within one sequence that law is the product of the sequence's q-law and k-law, so q
and k are independent there: under it, q and k depend on each other only through what
differs from sequence to sequence.  The correlation of q_i and k_i of the *same* token, which
the seed's argument about trained models is about, is measured on its own (over tokens).
The within-row spread is the part of Var(S) that softmax sees: the variance of a
query's logits across the keys of its row, which ignores what is common to the row.  It is
averaged over the same pairs, so a row counts as often as it has keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairMoments:
    """First and second moments of (q, k) under the uniform law over a corpus's pairs."""

    m_q: np.ndarray  # E[q]  (d,)
    m_k: np.ndarray  # E[k]  (d,)
    second_qq: np.ndarray  # E[q q^T]  (d, d)
    second_kk: np.ndarray  # E[k k^T]
    second_qk: np.ndarray  # E[q k^T]: (i, j) entry E[q_i k_j]

    @property
    def sigma_qq(self) -> np.ndarray:
        return self.second_qq - np.outer(self.m_q, self.m_q)

    @property
    def sigma_kk(self) -> np.ndarray:
        return self.second_kk - np.outer(self.m_k, self.m_k)

    @property
    def sigma_qk(self) -> np.ndarray:
        return self.second_qk - np.outer(self.m_q, self.m_k)


@dataclass(frozen=True)
class HeadMeasurement:
    """One head's logits and coordinates on a corpus (raw logits S = q . k, before 1/sqrt d)."""

    d: int
    rows: int  # queries, one attention row each
    pairs: int  # (query, key) pairs of the same sequence
    logit_mean: float  # E[S]
    logit_variance: float  # Var(S)
    coordinate_products_variance: float  # sum_i Var(q_i k_i)
    #: E[Var(S | row)]: the variance of a row's logits (divisor n: half the mean square
    #: difference of two keys drawn independently from the row, as the models' k and k~ are),
    #: averaged over pairs, i.e. each row weighted by its keys
    within_row_spread: float
    entropy_ratio: float  # mean over rows of H(softmax(S/sqrt d)) / log n
    moments: PairMoments
    #: Corr(q_i(a), k_i(a)) over the tokens a: q and k of the same token, per coordinate
    token_correlations: np.ndarray

    @property
    def logit_sd(self) -> float:
        return float(np.sqrt(self.logit_variance))

    @property
    def sd_over_sqrt_d(self) -> float:
        return self.logit_sd / float(np.sqrt(self.d))

    @property
    def second_moment(self) -> float:
        """E[S^2] = Var(S) + E[S]^2."""
        return self.logit_variance + self.logit_mean ** 2

    @property
    def mean_fraction(self) -> float:
        """The share of E[S^2] that is E[S]^2."""
        return self.logit_mean ** 2 / self.second_moment if self.second_moment else 0.0

    @property
    def cross_coordinate(self) -> float:
        """Var(S) - sum_i Var(q_i k_i) = sum_{i != j} Cov(q_i k_i, q_j k_j): zero when the
        coordinates' products are uncorrelated, the d^2 growth of Var(S) when they are not."""
        return self.logit_variance - self.coordinate_products_variance

    @property
    def coordinate_correlations(self) -> np.ndarray:
        """Corr(q_i, k_i) for each coordinate i under the pair law (q of one token, k of
        another of its sequence, or of itself)."""
        sigma = self.moments
        scale = np.sqrt(np.diag(sigma.sigma_qq) * np.diag(sigma.sigma_kk))
        return np.divide(np.diag(sigma.sigma_qk), scale, out=np.zeros(self.d), where=scale > 0)

    @property
    def row_share(self) -> float:
        """E[Var(S | row)] / Var(S): the share of the variance that is not common to a row, all
        that softmax sees (the law of total variance: at most 1)."""
        return self.within_row_spread / self.logit_variance if self.logit_variance > 0 else 0.0

    @property
    def cross_share(self) -> float | None:
        """The cross-coordinate terms as a share of Var(S) (None when S does not vary)."""
        return self.cross_coordinate / self.logit_variance if self.logit_variance > 0 else None


def measure_head(sequences) -> HeadMeasurement:
    """The measurements of one head from its (Q, K) per sequence, each (tokens, d); every
    sequence needs two tokens, so that its row has a spread."""
    sequences = [(np.asarray(q, dtype=float), np.asarray(k, dtype=float)) for q, k in sequences]
    if not sequences:
        raise ValueError("no sequences to measure")
    if sequences[0][0].ndim != 2:
        raise ValueError(f"each sequence needs Q and K of shape (tokens, d), not "
                         f"{sequences[0][0].shape}")
    d = sequences[0][0].shape[1]
    pairs = rows = 0
    logit_sum = logit_square_sum = spread_sum = entropy_sum = 0.0
    product_sum, product_square_sum = np.zeros(d), np.zeros(d)
    q_sum, k_sum = np.zeros(d), np.zeros(d)
    qq, kk, qk = (np.zeros((d, d)) for _ in range(3))
    tokens = Tokens(d)
    for queries, keys in sequences:
        n = len(queries)
        if n < 2 or keys.shape != queries.shape or queries.shape[1] != d:
            raise ValueError(f"each sequence needs Q and K of the same shape (tokens >= 2, {d}), "
                             f"not {queries.shape} and {keys.shape}")
        if not (np.isfinite(queries).all() and np.isfinite(keys).all()):
            raise ValueError("a query or key has a value that is not a finite number")
        with np.errstate(over="ignore", invalid="ignore"):  # checked on the next line
            logits = queries @ keys.T
        if not np.isfinite(logits).all():
            raise ValueError("the logits q . k overflow: the queries and keys are too large")
        tokens.add(queries, keys)
        pairs, rows = pairs + n * n, rows + n
        logit_sum += logits.sum()
        logit_square_sum += (logits ** 2).sum()
        spread_sum += n * logits.var(axis=1).sum()
        entropy_sum += row_entropies(logits / np.sqrt(d)).sum() / np.log(n)
        q_total, k_total = queries.sum(axis=0), keys.sum(axis=0)
        product_sum += q_total * k_total  # sum over pairs (a, b) of q_ai k_bi
        product_square_sum += (queries ** 2).sum(axis=0) * (keys ** 2).sum(axis=0)
        q_sum, k_sum = q_sum + n * q_total, k_sum + n * k_total
        qq += n * queries.T @ queries
        kk += n * keys.T @ keys
        qk += np.outer(q_total, k_total)
    product_mean = product_sum / pairs
    moments = PairMoments(q_sum / pairs, k_sum / pairs, qq / pairs, kk / pairs, qk / pairs)
    mean = logit_sum / pairs
    variance = max(float(logit_square_sum / pairs - mean ** 2), 0.0)  # no rounding below 0
    return HeadMeasurement(
        d=d, rows=rows, pairs=pairs, logit_mean=float(mean),
        logit_variance=variance,
        coordinate_products_variance=float((product_square_sum / pairs - product_mean ** 2).sum()),
        within_row_spread=float(spread_sum / pairs),
        entropy_ratio=float(entropy_sum / rows),
        moments=moments, token_correlations=tokens.correlations())


class Tokens:
    """Running sums over tokens (each token once) of q_i, k_i, q_i^2, k_i^2 and q_i k_i."""

    def __init__(self, d: int):
        self.count, self.sums = 0, np.zeros((5, d))

    def add(self, queries: np.ndarray, keys: np.ndarray) -> None:
        self.count += len(queries)
        self.sums += np.stack([queries.sum(axis=0), keys.sum(axis=0), (queries ** 2).sum(axis=0),
                               (keys ** 2).sum(axis=0), (queries * keys).sum(axis=0)])

    def correlations(self) -> np.ndarray:
        """Corr(q_i, k_i) over the tokens (0 where q_i or k_i does not vary)."""
        m_q, m_k, qq, kk, qk = self.sums / self.count
        scale = np.sqrt(np.maximum(qq - m_q ** 2, 0) * np.maximum(kk - m_k ** 2, 0))
        return np.divide(qk - m_q * m_k, scale, out=np.zeros_like(scale), where=scale > 0)


def row_entropies(logits: np.ndarray) -> np.ndarray:
    """H(softmax(z)) = log sum_j e^{z_j} - sum_j p_j z_j for each row z of ``logits``."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    total = weights.sum(axis=1)
    return np.log(total) - (weights * shifted).sum(axis=1) / total
