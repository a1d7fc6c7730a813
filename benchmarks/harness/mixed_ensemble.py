"""A mixed ensemble as a first-class config (``run --ensemble``): which provider each member runs on, with counts.

Members already cycle over a run's providers (member ``i`` on provider ``i % n``). ``--ensemble`` says it outright:
``"anthropic/claude-sonnet-4-6:2,openai/gpt-4.1-mini:1,local/smollm2:1"`` is four members, two on Claude, one on
GPT-4.1 mini and one on the embedded model, in that order. Every entry is ``<provider spec>:<count>``: the count is
required and is the text after the last colon, so a spec with a port stays unambiguous
(``openai-compatible/qwen2.5@http://127.0.0.1:8080/v1:2``). A simulator spec's parameters may hold commas
(``sim/scale=0.6,rho=0.5:2``, as ``--provider`` reads them).

The same can be a file, ``--ensemble members.toml`` or ``members.json``, whose ``members`` table maps each spec to
its count (in file order)::

    [members]
    "anthropic/claude-sonnet-4-6" = 2
    "local/smollm2" = 1

The counts give the ensemble's size; the run's providers are the specs repeated by their counts
(:func:`member_specs`), recorded so in its manifest (``config.providers``), each provider built once
(:meth:`benchmarks.harness.provider_stack.ProviderStack.build`). As with ``--provider``, the debate runs on the
first spec and the supervisor on the last. The roles table of the report gives the cost per member model.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from agent_providers import split_specs
from agent_providers.registry import KNOWN_PREFIXES

__all__ = ["EnsembleEntry", "member_specs", "parse_ensemble"]


@dataclass(frozen=True)
class EnsembleEntry:
    """One provider of a mixed ensemble and how many members run on it."""

    spec: str
    """Provider spec, e.g. ``"anthropic/claude-sonnet-4-6"``."""
    count: int
    """Members on it (count, at least 1)."""


def _check_spec(spec: str, where: str) -> None:
    prefix = spec.partition("/")[0]
    if prefix not in KNOWN_PREFIXES:
        raise ValueError(f"{where}: unknown provider {prefix!r} in {spec!r}; expected one of {', '.join(KNOWN_PREFIXES)}")


def _count(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{where}: the count must be a positive integer, got {value!r}")
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{where}: the count must be a positive integer, got {value!r}") from None
    if n < 1:
        raise ValueError(f"{where}: the count must be a positive integer, got {value!r}")
    return n


def _read_file(path: Path) -> list[EnsembleEntry]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"--ensemble {path}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8")) if path.suffix == ".toml" else json.loads(raw)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"--ensemble {path}: not valid {path.suffix[1:].upper()}: {exc}") from None
    members = data.get("members") if isinstance(data, dict) else None
    if not isinstance(members, dict) or not members:
        raise ValueError(f"--ensemble {path}: needs a 'members' table mapping each provider spec to its count")
    out = []
    for spec, count in members.items():
        where = f"--ensemble {path}, members.{spec}"
        _check_spec(spec, where)
        out.append(EnsembleEntry(spec, _count(count, where)))
    return out


def parse_ensemble(value: str) -> list[EnsembleEntry]:
    """The entries of ``--ensemble``: a ``spec:count,...`` list, or a ``.toml`` / ``.json`` file (module docstring).

    Parameters
    ----------
    value : str
        The option's value.

    Returns
    -------
    list of EnsembleEntry
        In the order given; a spec named twice is refused.

    Raises
    ------
    ValueError
        One line naming the entry (or the file and key) and the problem: an unknown provider prefix, a missing or
        non-positive count, a spec given twice, an empty list, a file that cannot be read or parsed. Nothing is
        built or called.

    Examples
    --------
    >>> parse_ensemble("anthropic/claude-sonnet-4-6:2,local/smollm2:1")
    [EnsembleEntry(spec='anthropic/claude-sonnet-4-6', count=2), EnsembleEntry(spec='local/smollm2', count=1)]
    """
    text = value.strip()
    if text.endswith((".toml", ".json")):
        entries = _read_file(Path(text))
    else:
        entries = []
        for part in split_specs(text):
            spec, sep, count = part.rpartition(":")
            where = f"--ensemble entry {part!r}"
            if not sep or not spec or not count.strip().isdigit():
                raise ValueError(f"{where}: give each provider with its count of members, '<provider spec>:<count>' "
                                 "(e.g. 'openai/gpt-4.1-mini:2')")
            _check_spec(spec.strip(), where)
            entries.append(EnsembleEntry(spec.strip(), _count(count.strip(), where)))
    if not entries:
        raise ValueError("--ensemble is empty: give '<provider spec>:<count>,...' or a .toml/.json file")
    seen = [e.spec for e in entries]
    twice = sorted({s for s in seen if seen.count(s) > 1})
    if twice:
        raise ValueError(f"--ensemble names {', '.join(twice)} twice: give each provider once with its count")
    return entries


def member_specs(entries: list[EnsembleEntry]) -> list[str]:
    """The run's providers: each spec repeated by its count, in order (member ``i`` runs on the ``i``-th).

    >>> member_specs([EnsembleEntry("sim", 2), EnsembleEntry("local/smollm2", 1)])
    ['sim', 'sim', 'local/smollm2']
    """
    return [e.spec for e in entries for _ in range(e.count)]
