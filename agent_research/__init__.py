"""Forecasters, ensembles, aggregation math and the full reconciliation pipeline."""

from agent_research.aggregation import AGGREGATORS, aggregate
from agent_research.combination import CombinationRule, CombinationStep
from agent_research.ensemble import Ensemble, EnsembleResult
from agent_research.forecaster import ForecasterAgent
from agent_research.pipeline import ForecastPipeline

__all__ = ["AGGREGATORS", "CombinationRule", "CombinationStep", "Ensemble", "EnsembleResult", "ForecastPipeline", "ForecasterAgent", "aggregate"]
