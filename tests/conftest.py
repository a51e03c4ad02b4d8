import os
import shutil

import pytest

from sdpa_proofs import INDEPENDENT, get_model

MODEL_NAMES = [m.name for m in INDEPENDENT]


@pytest.fixture(params=MODEL_NAMES)
def model(request):
    return get_model(request.param)


@pytest.fixture
def normal():
    return get_model("independent-normal")


@pytest.fixture
def pdflatex():
    """pdflatex, which .ci/run installs; a developer machine without it skips."""
    path = shutil.which("pdflatex")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing in CI: .ci/run should have installed TeX Live")
        pytest.skip("pdflatex not installed")
    return path
