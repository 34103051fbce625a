"""TRL005's runtime proof: the resolver check, since the failure itself needs two GPUs and vLLM.

``scenario.py`` lints a requirements list with the real ``trllint``, fixes it with ``trllint
--fix``, and matches vLLM's release history against the vllm line before and after.
"""

from __future__ import annotations

import subprocess
import sys

from tests.runtime.launch import launch_env, scenario_path


def test_fixed_requirements_admit_no_bad_vllm_release(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(scenario_path("trl005_known_bad_dependency"))],
        cwd=tmp_path,
        env=launch_env(cpu=True),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    # As written, the range lets in 0.7.1, the release with the device-mismatch bug ...
    assert "as written: vllm>=0.7.1" in output
    assert "with the bug: ['0.7.1']" in output
    # ... and trllint's own fix raises the floor to the first good release and admits no bad one.
    assert "after trllint --fix: vllm>=0.7.2" in output
    assert "with the bug: []" in output
    assert "resolver check passed" in output
