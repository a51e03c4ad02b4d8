"""Does the theory hold in a real transformer?  Every head of a trained model measured on a
corpus and set beside what the toolkit's models predict for it.

    report = run_empirical()                  # all-MiniLM-L6-v2 on the bundled corpus
    report = measure_model(model, sequences)  # any BERT encoder, any token ids

The measuring (measurements.py) and predicting (predictions.py) need only NumPy; the model
(transformer.py) needs the ``empirical`` extra.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path

import numpy as np

from .errors import BadInput
from .measurements import HeadMeasurement, measure_head
from .predictions import Prediction, predict


@dataclass(frozen=True)
class HeadResult:
    layer: int
    head: int
    measured: HeadMeasurement
    predictions: list[Prediction]


@dataclass(frozen=True)
class EmpiricalReport:
    model: str
    corpus: str
    sequences: int
    tokens: int
    heads: list[HeadResult]
    #: lines of the text left out: no token the model reads beyond its special ones
    skipped: int = 0

    def as_json(self) -> dict:
        """The report as JSON data (a quantity that could not be computed is null)."""
        from .report import finite_row

        return finite_row({"schema": 1, "model": self.model, "corpus": self.corpus,
                "sequences": self.sequences, "tokens": self.tokens, "skipped": self.skipped,
                "heads": [_head_json(h) for h in self.heads]})


def _head_json(result: HeadResult) -> dict:
    m = result.measured
    return {
        "layer": result.layer, "head": result.head, "d": m.d, "rows": m.rows, "pairs": m.pairs,
        "logit_mean": m.logit_mean, "logit_sd": m.logit_sd, "sd_over_sqrt_d": m.sd_over_sqrt_d,
        "logit_variance": m.logit_variance, "second_moment": m.second_moment,
        "mean_fraction": m.mean_fraction,
        "coordinate_products_variance": m.coordinate_products_variance,
        "cross_coordinate": m.cross_coordinate, "cross_share": m.cross_share,
        "within_row_spread": m.within_row_spread, "row_share": m.row_share,
        "entropy_ratio": m.entropy_ratio,
        "coordinates": {"mean_q": m.moments.m_q.tolist(), "mean_k": m.moments.m_k.tolist(),
                        "variance_q": np.diag(m.moments.sigma_qq).tolist(),
                        "variance_k": np.diag(m.moments.sigma_kk).tolist(),
                        "correlation_qk": m.coordinate_correlations.tolist(),
                        "token_correlation_qk": m.token_correlations.tolist()},
        "predictions": [{"model": p.model, "fit": p.fit, "parameters": p.parameters,
                         "variance": p.variance, "second_moment": p.second_moment,
                         "row_spread": p.row_spread, "ratio": p.ratios(m)}
                        for p in result.predictions],
    }


DEFAULT_CORPUS = "the bundled corpus"


def read_corpus(path: Path | None = None) -> list[str]:
    """The sequences of a text file, one per line (blank lines and lines starting with # are
    skipped); the bundled corpus when ``path`` is None."""
    source = path if path is not None else files("sdpa_proofs").joinpath("data/corpus.txt")
    try:  # utf-8-sig: a byte-order mark is not text
        text = source.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read the text {path}: {error}") from error
    sentences = [line.strip() for line in text.splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
    if not sentences:
        raise BadInput(f"{path or DEFAULT_CORPUS} holds no text (one sequence per line)")
    return sentences


def measure_model(model, sequences: list[list[int]], name: str = "", corpus: str = "",
                  progress: Callable[[str], None] | None = None) -> EmpiricalReport:
    """Every head of a BERT encoder measured on the given token-id sequences (each of two
    tokens or more), with every model's predictions."""
    from .transformer import capture

    sequences = [_token_ids(ids, model.config.vocab_size) for ids in sequences]
    sequences = [ids for ids in sequences if len(ids) >= 2]
    if not sequences:
        raise BadInput("no sequence of two tokens or more: a row needs two keys to spread")
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is not None and max(map(len, sequences)) > limit:
        raise BadInput(f"a sequence of {max(map(len, sequences))} tokens: the model reads at "
                       f"most {limit}")
    say = progress or (lambda what: None)
    say("running the model")
    captured = capture(model, sequences)
    heads = []
    for layer in range(captured.layers):
        for head in range(captured.heads):
            say(f"layer {layer} head {head}")
            measured = measure_head(captured.head(layer, head))
            heads.append(HeadResult(layer, head, measured, predict(measured)))
    return EmpiricalReport(name or type(model).__name__, corpus, len(sequences),
                           sum(map(len, sequences)), heads)


def _token_ids(ids, vocabulary: int) -> list[int]:
    """A sequence of token ids as a list of ints, each one the model knows."""
    ids = [int(i) for i in np.asarray(ids).reshape(-1)]
    if any(not 0 <= i < vocabulary for i in ids):
        raise BadInput(f"a token id outside the model's vocabulary 0..{vocabulary - 1}")
    return ids


def run_empirical(text: Path | None = None, max_tokens: int = 128,
                  progress: Callable[[str], None] | None = None) -> EmpiricalReport:
    """The packaged all-MiniLM-L6-v2 measured on ``text`` (the bundled corpus by default)."""
    from .transformer import PACKAGED_MODEL, load_packaged_model, tokenize

    if max_tokens < 2:
        raise BadInput(f"max_tokens = {max_tokens}: a row needs two tokens")
    sentences = read_corpus(text)
    if progress:
        progress("loading the model")
    model, tokenizer = load_packaged_model()
    if max_tokens > model.config.max_position_embeddings:
        raise BadInput(f"--max-tokens {max_tokens}: {PACKAGED_MODEL} reads at most "
                       f"{model.config.max_position_embeddings} tokens")
    special = set(tokenizer.all_special_ids)  # [CLS], [SEP], [UNK], ...
    tokenized = tokenize(tokenizer, sentences, max_tokens)
    sequences = [ids for ids in tokenized if not special.issuperset(ids)]
    if not sequences:
        raise BadInput(f"no line of {text or DEFAULT_CORPUS} has a token the model reads beyond "
                       f"its special tokens ([CLS], [SEP], [UNK]) within {max_tokens} tokens")
    report = measure_model(model, sequences, PACKAGED_MODEL,
                           str(text) if text else DEFAULT_CORPUS, progress)
    return replace(report, skipped=len(tokenized) - len(sequences))
