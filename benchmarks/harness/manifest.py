"""The content of a run's ``manifest.json``: what defines the run (config, providers and models, prices, seed,
question selection, clusters), where it came from (command line, git commit, package versions) and, at each
rewrite, the questions' statuses and what the session adds (counters, wall time, spend, why it stopped)."""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
from pathlib import Path
from typing import Any

import agent_research.prompts
import agent_specialists.prompts

from agent_providers import Provider, redact_spec
from agent_providers.pricing import PRICE_SOURCE
from agent_schemas import Question
from benchmarks.harness.config import RunConfig
from benchmarks.harness.provenance import git_commit, package_version, package_versions
from benchmarks.harness.selection import question_digest
from benchmarks.protocol.clusters import ClusterAssignment

__all__ = ["RunManifest", "prompt_version"]


def prompt_version() -> str:
    """The version of the prompts every agent is sent: the first 12 hex digits of the SHA-256 of the text of
    :mod:`agent_research.prompts` and :mod:`agent_specialists.prompts` (the members', debaters' and
    supervisor's templates), so any change to a template, however small, is another version."""
    digest = hashlib.sha256()
    for module in (agent_research.prompts, agent_specialists.prompts):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:12]


class RunManifest:
    """The manifest of one session of a run: fixed at its start, rendered with the statuses of the moment.

    Parameters
    ----------
    config : RunConfig
        The run's config (provider specs redacted again here: never a credential).
    providers : list of Provider
        The run's providers (their redacted specs and models are recorded).
    selection : dict
        The question selection (:meth:`benchmarks.harness.selection.QuestionSelection.describe`).
    questions : list of Question
        The questions of the run (shard).
    clusters : ClusterAssignment
        The bootstrap clusters of the whole selection.
    command_line : list of str, optional
        The command line, redacted (:func:`benchmarks.harness.provenance.redacted_command_line`).
    shard : dict, optional
        The ``shard`` entry of a sharded run (:meth:`benchmarks.harness.selection.QuestionSelection.shard`).
    """

    def __init__(self, config: RunConfig, providers: list[Provider], selection: dict[str, Any], questions: list[Question],
                 clusters: ClusterAssignment, command_line: list[str] | None = None, shard: dict[str, Any] | None = None) -> None:
        self.config = config
        self.providers = providers
        self.selection = selection
        self.question_ids = [q.id for q in questions]
        #: :func:`benchmarks.harness.selection.question_digest` of each question, in the order of ``question_ids``.
        self.question_digests = [question_digest(q) for q in questions]
        #: The kinds of the run's questions (sorted names: binary, multiple_choice, numeric).
        self.question_kinds = sorted({q.kind.name for q in questions})
        self.clusters = clusters
        self.command_line = command_line
        self.shard = shard

    def content(self, *, started: str, status: dict[str, str], extra: dict[str, Any]) -> dict[str, Any]:
        """The manifest as written now: ``started`` (ISO time of the run's first session), each question's
        ``status``, and the session's ``extra`` entries after the fixed ones."""
        config = self.config.model_dump(mode="json")
        config["providers"] = [redact_spec(s) for s in config.get("providers") or []]  # never a credential
        return {
            "run_id": self.config.run_id,
            "created_at": started,
            "updated_at": dt.datetime.now(dt.timezone.utc).isoformat(),
            "package": "forecast-reconcile",
            "package_version": package_version(),
            "python": sys.version.split()[0],
            "config": config,
            "providers": [{"spec": redact_spec(p.spec), "model": p.model} for p in self.providers],
            "prices": PRICE_SOURCE,
            "seed": self.config.seed,
            "question_selection": self.selection,
            "question_ids": self.question_ids,
            "question_digests": self.question_digests,
            "question_kinds": self.question_kinds,
            "prompt_version": prompt_version(),
            "clusters": self.clusters.summary(),
            "question_status": status,
            "command_line": self.command_line,
            "git": git_commit(),
            "package_versions": package_versions(),
            **extra,
        }
