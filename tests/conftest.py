import numpy as np
import pytest

from netcl_lite.core.device import manager


@pytest.fixture(scope="session")
def queue():
    return manager.default("auto").queue


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
