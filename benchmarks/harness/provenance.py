"""Where a result came from: the command line (credentials redacted), the git commit, package versions.

Recorded in every run's ``manifest.json`` (with the run's wall time) and in saved forecasts, so a result
can be traced to the code and the command that produced it.
"""

from __future__ import annotations

import functools
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from agent_providers import redact_spec
from agent_providers.credentials import redact_url

__all__ = ["PACKAGES", "git_commit", "package_version", "package_versions", "redacted_command_line"]

#: Distributions whose versions are recorded (those that change numbers, prompts, prices or I/O).
PACKAGES = ("forecast-reconcile", "numpy", "scipy", "pandas", "pydantic", "anthropic", "openai", "llama-cpp-python",
            "genai-prices", "bm25s", "ddgs", "typer", "filelock", "diskcache")


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """Installed version of forecast-reconcile ('unknown' when run from a source tree)."""
    try:
        return version("forecast-reconcile")
    except PackageNotFoundError:
        return "unknown"


def redacted_command_line(argv: list[str]) -> list[str]:
    """``argv`` with every value that could carry a credential redacted: each comma-separated part of an
    argument (or of an ``--option=value``) that is a provider spec with a URL goes through
    :func:`agent_providers.redact_spec`, any other URL through ``redact_url`` (user info removed, secret
    query values replaced by ``***``).

    Examples
    --------
    >>> redacted_command_line(["run", "-p", "openai-compatible/m@http://h:8000/v1?key=sk-abc123"])
    ['run', '-p', 'openai-compatible/m@http://h:8000/v1?key=***']
    """
    out = []
    for arg in argv:
        head, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        out.append(head + eq + ",".join(_redact(p) for p in value.split(",")))
    return out


def _redact(part: str) -> str:
    if "://" in part.partition("@")[2]:
        return redact_spec(part)  # a provider spec with a URL
    return redact_url(part) if "://" in part else part


@functools.lru_cache(maxsize=1)
def git_commit() -> dict[str, object] | None:
    """``{"commit": <sha>, "dirty": <bool>}`` of the source tree this package runs from, or None when it is
    not a git checkout (an installed wheel) or git is not available."""
    root = Path(__file__).resolve().parents[1]
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if sha.returncode != 0:
            return None
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": sha.stdout.strip(), "dirty": bool(status.stdout.strip()) if status.returncode == 0 else None}


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    """Installed versions of :data:`PACKAGES` (None when one is not installed)."""
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out
