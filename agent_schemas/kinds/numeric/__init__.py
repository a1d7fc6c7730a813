"""The numeric kind (being built: every method raises NotImplementedError until it lands)."""

from __future__ import annotations

from typing import ClassVar

from agent_schemas.kinds.base import KindSpec, QuestionKind
from agent_schemas.kinds.numeric.spec import NumericSpec

__all__ = ["NUMERIC", "NumericKind", "NumericSpec"]


class NumericKind(QuestionKind):
    name: ClassVar[str] = "numeric"
    label: ClassVar[str] = "numeric"
    spec_type: ClassVar[type[KindSpec]] = NumericSpec
    pools = {}
    default_methods = ()
    scores = {}
    primary_score = ""

    def check_outcome(self, spec, outcome): raise NotImplementedError
    def question_lines(self, spec): raise NotImplementedError
    def outcome_text(self, spec, outcome): raise NotImplementedError
    def size(self, spec): raise NotImplementedError
    def check_forecast(self, spec, values, *, name="forecast"): raise NotImplementedError
    def uninformed(self, spec): raise NotImplementedError
    def forecast_text(self, spec, forecast): raise NotImplementedError
    def answer_properties(self, spec): raise NotImplementedError
    def answer_template(self, spec): raise NotImplementedError
    def answer_request(self, spec): raise NotImplementedError
    def read_answer(self, spec, obj, *, raw_text=""): raise NotImplementedError
    def score(self, specs, forecasts, outcomes): raise NotImplementedError
    def outcome_log_probability(self, specs, forecasts, outcomes): raise NotImplementedError


NUMERIC = NumericKind()
