"""Importing the agents does not import what only the fitted methods use (issue 38: ``scipy.optimize`` at module
level made ``import agent_research`` cost 1.8x ``import pandas``; ``benchmarks/perf/import_time.py`` measures it)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from agent_research.aggregation import extremized, fit_extremizing_factor, fit_platt_scaling
from agent_research.learned import fit_pool_weights


def test_importing_agent_research_loads_no_scipy():
    code = "import json, sys, agent_research; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_the_fits_import_scipy_where_they_use_it():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 1.5, size=400)
    y = (rng.random(400) < 1 / (1 + np.exp(-2 * z))).astype(int)
    members = 1 / (1 + np.exp(-np.stack([z, z], axis=1)))
    d = fit_extremizing_factor(members, y)
    assert 1.5 < d < 2.6
    # the logistic function of scipy, applied where the module uses it
    assert extremized([[0.8, 0.8]], d=2.0)[0] == (0.8 / 0.2) ** 2 / (1 + (0.8 / 0.2) ** 2)
    scaler = fit_platt_scaling(members[:, 0], y)
    assert scaler.a > 1.5
    w = fit_pool_weights(np.column_stack([members[:, 0], 1 - members[:, 0]]), y)
    assert w[0] > 0.95


def test_building_a_pipeline_imports_what_its_aggregates_need_before_any_question_runs():
    """A first import on the running event loop stalled every call in flight (a rate-limited run's pace fell from
    0.95 to 0.85 of its limit): the pipeline imports scipy.special when it is built."""
    code = ("import json, sys\nfrom agent_providers import ScriptedProvider\nfrom agent_research import ForecastPipeline\n"
            "before = 'scipy.special' in sys.modules\nForecastPipeline.from_config([ScriptedProvider(['0.5'])])\n"
            "print(json.dumps([before, 'scipy.special' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]
