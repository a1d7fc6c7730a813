"""Forecasters, ensembles, aggregation math and the full reconciliation pipeline."""

from agent_research.aggregation import AGGREGATORS, aggregate
from agent_research.combination import CombinationRule, CombinationStep
from agent_research.config import DebateSettings, MemberSettings, PipelineConfig, RoleProviders, SupervisorSettings
from agent_research.ensemble import Ensemble, EnsembleResult, GivenForecasts
from agent_research.forecaster import ForecasterAgent
from agent_research.pipeline import ForecastPipeline

__all__ = [
    "AGGREGATORS", "CombinationRule", "CombinationStep", "DebateSettings", "Ensemble", "EnsembleResult", "ForecastPipeline",
    "ForecasterAgent", "GivenForecasts", "MemberSettings", "PipelineConfig", "RoleProviders", "SupervisorSettings", "aggregate",
]
