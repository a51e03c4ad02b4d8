"""The code base stays ruff clean; ruff comes with the lint extra, which .ci/run installs."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff not installed (pip install -e '.[lint]' brings it)")
    completed = subprocess.run([ruff, "check", "sdpa_proofs", "derivations", "tests",
                                "benchmarks", "docs"], cwd=ROOT, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout
