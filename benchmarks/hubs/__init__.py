"""Forecast hubs (``forecast-reconcile aggregate HUB_DIR``, ``aggregate --panel flusight``): read a hubverse hub, pool
its members' quantile and option forecasts every way, and score them as the hubs do, beside the hub's own pools.

Modules, one concept each, lowest first:

* :mod:`.read`: a hubverse hub folder or the bundled FluSight panel as a :class:`~.read.Hub` (bad input named by
  file, row, column and value);
* :mod:`.events`: a target's events as arrays (quantile cube, option stack, outcomes, seasons, clusters);
* :mod:`.scores`: WIS and its parts, coverage, absolute error; RPS, Brier and log loss of options;
* :mod:`.pools`: median, mean, trimmed mean, linear pool, walk-forward trained weights; option mean, log and median pools;
* :mod:`.leaderboard`: who is a member, a hub row or left out; per-season tables with intervals and paired differences;
* :mod:`.supervisor`: the SupervisorAgent's weights of the members per reference date, its pool, tokens and cost;
* :mod:`.plots`: fan charts of forecast rounds, each pool's WIS and coverage over time;
* :mod:`.command`: what the command line runs, writes and prints.
"""

from benchmarks.hubs.command import BUNDLED_HUBS, HubRun, load_hub, run_hub
from benchmarks.hubs.read import Hub, is_hub_folder, read_flusight, read_hub

__all__ = ["BUNDLED_HUBS", "Hub", "HubRun", "is_hub_folder", "load_hub", "read_flusight", "read_hub", "run_hub"]
