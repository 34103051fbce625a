"""TRL005's runtime proof: the resolver check on a requirements list (no vLLM, no GPU needed).

The failure itself, GRPO with vLLM on two GPUs stopping with ``Expected all tensors to be on the
same device, but found at least two devices, cuda:1 and cuda:0!``, needs two GPUs and a vLLM
release before 0.7.2; the test machines have neither. What TRL005 changes is which vLLM releases
a project's requirements let an installer pick, and that is what this script checks:

1. it writes ``REQUIREMENTS`` (as a project might have it) to ``requirements.txt`` in a temporary
   folder, beside a GRPO recipe that turns on TRL's vLLM generation (``use_vllm: true``: the bug
   needs it, and TRL005 reports the range only where the project shows it), and ``trllint
   --select TRL005`` must flag it;
2. ``trllint --fix`` rewrites it (a safe fix), and a second lint must be clean;
3. with ``packaging``, every vLLM release on PyPI up to 0.8.5 is matched against each vllm line
   before and after: before, some releases with the bug are admitted (the lowest a resolver may
   pick is one); after, none is, and 0.7.2 still is.

Run it from anywhere: ``python rules/trl005_known_bad_dependency/scenario.py``. Exit 0 means the
proof holds; anything else prints what failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

REQUIREMENTS = """\
# GRPO with a vLLM generation server
accelerate>=1.3.0
trl>=0.14.0
vllm>=0.7.1; sys_platform != 'win32'  # the minimum TRL asked for before 0.7.2
"""

BAD_BELOW = Version("0.7.2")

# vLLM's releases on PyPI, oldest first, up to the 0.8 series (``pip index versions vllm``).
VLLM_RELEASES = [
    Version(v)
    for v in """
    0.0.1 0.1.0 0.1.1 0.1.2 0.1.3 0.1.4 0.1.5 0.1.6 0.1.7 0.2.0 0.2.1.post1 0.2.2 0.2.3 0.2.4
    0.2.5 0.2.6 0.2.7 0.3.0 0.3.1 0.3.2 0.3.3 0.4.0 0.4.0.post1 0.4.1 0.4.2 0.4.3 0.5.0
    0.5.0.post1 0.5.1 0.5.2 0.5.3 0.5.3.post1 0.5.4 0.5.5 0.6.0 0.6.1 0.6.1.post1 0.6.1.post2
    0.6.2 0.6.3 0.6.3.post1 0.6.4 0.6.4.post1 0.6.5 0.6.6 0.6.6.post1 0.7.0 0.7.1 0.7.2 0.7.3
    0.8.0 0.8.1 0.8.2 0.8.3 0.8.4 0.8.5 0.8.5.post1
    """.split()
]


def trllint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "trllint").is_dir():  # run from a checkout: use its trllint
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(checkout), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "trllint", "--no-cache", "--preview", "--select", "TRL005", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def vllm_lines(text: str) -> list[Requirement]:
    requirements = []
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            requirement = Requirement(line)
            if requirement.name == "vllm":
                requirements.append(requirement)
    return requirements


def admitted(requirement: Requirement) -> list[Version]:
    return [v for v in VLLM_RELEASES if requirement.specifier.contains(v)]


def main() -> int:
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "requirements.txt").write_text(REQUIREMENTS)
        (work / "grpo.yaml").write_text("use_vllm: true\n")  # the project runs TRL's vLLM generation
        lint = trllint("requirements.txt", cwd=work)
        print(f"$ trllint --select TRL005 requirements.txt   (exit {lint.returncode})\n{lint.stdout}")
        if lint.returncode != 1 or "TRL005" not in lint.stdout:
            failures.append(f"trllint did not flag the requirements:\n{lint.stdout}{lint.stderr}")
        fix = trllint("--fix", "requirements.txt", cwd=work)
        fixed = (work / "requirements.txt").read_text()
        relint = trllint("requirements.txt", cwd=work)
        print(f"$ trllint --select TRL005 --fix requirements.txt   (exit {fix.returncode})")
        print(f"then a second lint exits {relint.returncode}\n")
        if relint.returncode != 0:
            failures.append(f"findings remain after --fix:\n{relint.stdout}{relint.stderr}")

    for label, text in (("as written", REQUIREMENTS), ("after trllint --fix", fixed)):
        for requirement in vllm_lines(text):
            releases = admitted(requirement)
            bad = [v for v in releases if v < BAD_BELOW]
            print(f"{label:>20}: {requirement}")
            shown = [str(v) for v in bad]
            print(f"{'':>20}  admits {len(releases)} of {len(VLLM_RELEASES)} releases; with the bug: {shown}")
            if releases:
                print(f"{'':>20}  a resolver picks {releases[-1]} (highest) or {releases[0]} (lowest, or when")
                print(f"{'':>20}  another pin such as torch caps vllm)")
            if label == "as written" and not bad:
                failures.append(f"the buggy {requirement} admits no bad release: the scenario proves nothing")
            if label != "as written" and bad:
                failures.append(f"the fixed requirement {requirement} still admits {[str(v) for v in bad]}")
            if label != "as written" and BAD_BELOW not in releases:
                failures.append(f"the fixed requirement {requirement} shuts out {BAD_BELOW}, the first good release")
    if fixed == REQUIREMENTS:
        failures.append("trllint --fix changed nothing")

    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    if not failures:
        print("\nresolver check passed: the fixed requirements admit no vLLM release with the bug")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
