"""Runtime tests: every test in this folder is marked ``runtime`` here (the default run leaves them
out; ``pytest -m runtime`` runs them); those marked ``gpu`` skip cleanly without CUDA."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.runtime.launch import cuda_device_count

_cuda_devices: int | None = None


def gpu_count() -> int:
    global _cuda_devices
    if _cuda_devices is None:
        _cuda_devices = cuda_device_count() if importlib.util.find_spec("torch") else 0
    return _cuda_devices


# First, before pytest's own hook deselects by mark: `-m runtime` and `-m 'not runtime'` must see
# the mark this hook adds.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # Hooks see the whole session's items: keep to the ones in this folder.
    here = Path(__file__).parent
    items = [item for item in items if here in Path(str(item.fspath)).parents]
    for item in items:
        item.add_marker(pytest.mark.runtime)
    missing = [m for m in ("torch", "accelerate", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        skip = pytest.mark.skip(reason=f"runtime tests need the test extra ({', '.join(missing)} missing)")
        for item in items:
            item.add_marker(skip)


def pytest_runtest_setup(item):
    # Asked when a GPU test is about to run, not at collection: the probe imports torch (seconds),
    # which a run that deselects the runtime tests (the default) should not pay, on every worker.
    if item.get_closest_marker("gpu") and gpu_count() == 0:
        pytest.skip("needs a CUDA GPU; none is visible here")
