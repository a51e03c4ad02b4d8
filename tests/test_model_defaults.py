"""A model in a few lines: a LatentLinearModel needs only its latents and loadings; the name,
title, dimension and parameter points get defaults, the points chosen to respect every
assumption and to keep every loading real."""

import pytest
import sympy as sp

from sdpa_proofs import (
    NORMAL,
    Derivation,
    E,
    Latent,
    LatentLinearModel,
    Step,
    VerifySettings,
    d,
    dot_product,
    i,
    k,
    q,
    verify_derivation,
)
from sdpa_proofs.errors import BadInput

r = sp.Symbol("r", real=True)
a = sp.Symbol("a", positive=True)


def correlated_pairs() -> LatentLinearModel:
    """q_i = a u_i, k_i = a (r u_i + sqrt(1 - r^2) w_i): pairs with correlation r."""
    return LatentLinearModel(latents=(Latent("u", NORMAL), Latent("w", NORMAL)),
                             loadings={q: {"u": a}, k: {"u": r * a, "w": a * sp.sqrt(1 - r**2)}})


def test_the_hidden_fields_get_defaults_and_the_points_keep_the_loadings_real():
    model = correlated_pairs()
    assert model.name == "latent-model" and model.title and model.dimension == d
    assert len(model.parameter_points) == 2
    for point in model.parameter_points:
        assert point[a] > 0 and abs(point[r]) < 1  # a positive, sqrt(1 - r^2) real
    first, second = model.parameter_points
    assert all(first[x] != second[x] for x in first)


def test_a_derivation_under_a_model_in_a_few_lines_verifies():
    """E[S] = d E[q_1 k_1] = d r a^2 (covariance of the pair, by hand)."""
    model = correlated_pairs()
    derivation = Derivation(
        claim=sp.Eq(E(dot_product), d * r * a**2),
        steps=[Step(sp.Sum(E(q[i] * k[i]), (i, 1, d)), "linearity"),
               Step(sp.Sum(r * a**2, (i, 1, d)), "model_moment"),
               Step(d * r * a**2, "count_terms")],
        models=[model], name="few_lines")
    report = verify_derivation(derivation, VerifySettings(monte_carlo_dimensions=(64,)))
    assert report.status == "verified"
    assert any("latent-model" in assumption for assumption in report.assumptions)


def test_loadings_that_no_values_make_real_are_a_clear_error():
    with pytest.raises(BadInput, match="no parameter values found"):
        LatentLinearModel(latents=(Latent("u", NORMAL),), loadings={q: {"u": sp.sqrt(-a)}})


def test_a_derivation_written_in_a_notebook_cell_is_named_after_its_title():
    """Jupyter runs a cell as a file such as /tmp/ipykernel_1/2.py, a prompt as <stdin>: the
    name comes from the title there, and from the file's stem for a file of its own."""
    source = ("from sympy import Eq\n"
              "from sdpa_proofs import Derivation, E, S, Step, dot_product\n"
              "made = Derivation(claim=Eq(E(S), 0), where={S: dot_product},\n"
              "                  steps=[Step(0, 'linearity')], title='The mean: E[S] = 0')\n")
    for file in ("/tmp/ipykernel_1/2.py", "<stdin>"):
        namespace: dict = {}
        exec(compile(source, file, "exec"), namespace)  # noqa: S102 - the test's own code
        assert namespace["made"].name == "the_mean_e_s_0"
    namespace = {}
    exec(compile(source, "/somewhere/my_claim.py", "exec"), namespace)  # noqa: S102
    assert namespace["made"].name == "my_claim"
