"""Raw reads of the bundled ForecastBench files."""

import pytest

from agent_tools import forecastbench_dir, load_forecastbench_questions


def test_bundled_questions_table():
    assert (forecastbench_dir() / "DATA_CARD.md").is_file()
    df = load_forecastbench_questions(columns=["qid", "source", "question_type", "outcome"])
    assert len(df) == 18021  # DATA_CARD.md counts
    assert df["qid"].is_unique
    assert (df["question_type"] == "market").sum() == 1020 + 537 + 309 + 182
    assert set(df["outcome"].unique()) == {0, 1}


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.parquet"):
        load_forecastbench_questions(tmp_path / "nope.parquet")
