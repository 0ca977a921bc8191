"""Shared fixtures: the dna data shipped in the repository and the command-line tools, when built."""
import os
from pathlib import Path

import pytest
from sklearn.datasets import load_svmlight_file

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


def tool(name):
    """The path of a built command-line tool (SPARSEMC_TOOLS or build/release/tools), or None."""
    folder = Path(os.environ.get("SPARSEMC_TOOLS", ROOT / "build" / "release" / "tools"))
    path = folder / name
    return path if path.exists() else None


@pytest.fixture(scope="session")
def dna():
    X, y = load_svmlight_file(str(DATA / "dna.scale"), n_features=180)
    X_test, y_test = load_svmlight_file(str(DATA / "dna.scale.t"), n_features=180)
    return X.tocsr(), y.astype(int), X_test.tocsr(), y_test.astype(int)


@pytest.fixture(scope="session")
def train_tool():
    path = tool("sparsemc-train")
    if path is None:
        pytest.skip("SKIPPED: sparsemc-train is not built (build/release/tools); set SPARSEMC_TOOLS")
    return path
