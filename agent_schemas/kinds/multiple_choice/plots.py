"""Figures of multiple-choice forecasts, drawn on a matplotlib ``Axes`` the caller creates (this package never
imports matplotlib: the viewer owns figures and their rendering)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["plot_calibration", "plot_forecasts", "top_label_bins"]


def plot_forecasts(ax: Any, options: tuple[str, ...], forecasts: Mapping[str, np.ndarray], outcome: int | None,
                   members: Mapping[str, np.ndarray] | None = None) -> None:
    """Probability bars per option: one group per option (a row) and one bar per label of ``forecasts`` (methods,
    baselines; each a probability vector over ``options``), bar length the probability in percent; each member's
    probability of each option a grey tick across the option's row (one legend entry for all members); the option
    that happened shaded and its label followed by ``(happened)``."""
    k, n = len(options), max(len(forecasts), 1)
    width = 0.8 / n
    y = np.arange(k)
    for i, (label, p) in enumerate(forecasts.items()):
        ax.barh(y - 0.4 + (i + 0.5) * width, 100 * np.asarray(p), height=width, label=str(label))
    for i, p in enumerate((members or {}).values()):
        ax.plot(100 * np.asarray(p, dtype=float), y, linestyle="none", marker="|", markersize=14, color="0.25",
                label=f"members ({len(members or {})})" if i == 0 else "_member")
    ax.set_yticks(y, labels=[f"{o} (happened)" if outcome is not None and j == int(outcome) else o
                             for j, o in enumerate(options)])
    if outcome is not None:
        ax.axhspan(int(outcome) - 0.45, int(outcome) + 0.45, color="0.85", zorder=0)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("probability (%)")
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.01, 0.5))


def top_label_bins(top_p: np.ndarray, top_hit: np.ndarray, n_bins: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-label reliability (Guo et al. 2017, "On calibration of modern neural networks", ICML): the forecasts'
    highest probability against how often that option happened, in ``n_bins`` equal-width bins of [0, 1].

    Returns ``(mean top probability, frequency of the top option happening, count)`` per non-empty bin.
    """
    p = np.asarray(top_p, dtype=float)
    hit = np.asarray(top_hit, dtype=float)
    idx = np.minimum((p * n_bins).astype(int), n_bins - 1)
    count = np.bincount(idx, minlength=n_bins)
    keep = count > 0
    mean_p = np.bincount(idx, weights=p, minlength=n_bins)[keep] / count[keep]
    freq = np.bincount(idx, weights=hit, minlength=n_bins)[keep] / count[keep]
    return mean_p, freq, count[keep]


def plot_calibration(ax: Any, diagnostics: Mapping[str, Mapping[str, np.ndarray]]) -> None:
    """Top-label reliability diagram, one line per label of ``diagnostics`` (each the
    :meth:`~agent_schemas.kinds.multiple_choice.MultipleChoiceKind.diagnostics` of a method over its questions)."""
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=1)
    for label, d in diagnostics.items():
        mean_p, freq, _ = top_label_bins(d["top_p"], d["top_hit"])
        ax.plot(mean_p, freq, marker="o", label=str(label))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("top option's probability (bin mean)")
    ax.set_ylabel("how often the top option happened")
    ax.legend(fontsize="small")
