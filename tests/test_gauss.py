"""Gauss rules by Newton's method, against mpmath's eigenvalue route, and the check that stands
between any computed rule and its use."""

import mpmath
import pytest

from sdpa_proofs import gauss
from sdpa_proofs.gauss import gauss_rule, is_gauss_rule, newton_rule

KINDS = ("hermite", "legendre", "laguerre")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("points", [1, 2, 3, 7, 32, 65])
def test_newton_rules_are_mpmaths_golub_welsch_rules(kind, points):
    nodes, weights = newton_rule(kind, points, 48)
    with mpmath.workdps(70):
        reference = sorted(zip(*mpmath.mp.gauss_quadrature(points, kind)))
        for (x, w), (rx, rw) in zip(sorted(zip(nodes, weights)), reference, strict=True):
            assert abs(x - rx) <= mpmath.mpf(10) ** -46 * max(1, abs(rx))
            assert abs(w - rw) <= mpmath.mpf(10) ** -46 * rw


def _corrupted(nodes, weights):
    """Ways a wrong rule could look: a node off in its 30th digit, a weight off, a node
    dropped (its weight given to a neighbour), a node twice."""
    off = mpmath.mpf(10) ** -30
    yield (nodes[0] + off,) + nodes[1:], weights
    yield nodes, (weights[0] * (1 + off),) + weights[1:]
    yield nodes[1:], (weights[0] + weights[1],) + weights[2:]
    yield (nodes[1],) + nodes[1:], weights


@pytest.mark.parametrize("kind", KINDS)
def test_the_exactness_check_accepts_the_rule_and_rejects_rules_near_it(kind):
    nodes, weights = newton_rule(kind, 9, 48)
    assert is_gauss_rule(kind, nodes, weights, 48)
    for wrong_nodes, wrong_weights in _corrupted(nodes, weights):
        assert not is_gauss_rule(kind, wrong_nodes, wrong_weights, 48)


def test_a_rule_that_fails_the_check_is_replaced_by_mpmaths(monkeypatch):
    nodes, weights = newton_rule("hermite", 6, 48)
    wrong = (nodes[0] * (1 + mpmath.mpf(10) ** -20),) + nodes[1:]
    monkeypatch.setattr(gauss, "newton_rule", lambda kind, points, dps: (wrong, weights))
    used, _ = gauss_rule("hermite", 6, 48)
    with mpmath.workdps(48):
        reference, _ = mpmath.mp.gauss_quadrature(6, "hermite")
    assert list(used) == list(reference)
