"""Runtime tests: marked ``runtime``; those marked ``gpu`` skip cleanly without CUDA."""

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


def pytest_collection_modifyitems(config, items):
    # Hooks see the whole session's items: keep to the ones in this folder.
    here = Path(__file__).parent
    items = [item for item in items if here in Path(str(item.fspath)).parents]
    for item in items:
        item.add_marker(pytest.mark.runtime)
    needs_gpu = [item for item in items if item.get_closest_marker("gpu")]
    if needs_gpu and gpu_count() == 0:
        skip = pytest.mark.skip(reason="needs a CUDA GPU; none is visible here")
        for item in needs_gpu:
            item.add_marker(skip)
    missing = [m for m in ("torch", "accelerate", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        skip = pytest.mark.skip(reason=f"runtime tests need the test extra ({', '.join(missing)} missing)")
        for item in items:
            item.add_marker(skip)
