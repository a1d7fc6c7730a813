"""Raw reads of the bundled ForecastBench files."""

import pytest

from agent_tools import forecastbench_dir, load_forecastbench_human_forecasts, load_forecastbench_questions


def test_bundled_questions_table():
    assert (forecastbench_dir() / "DATA_CARD.md").is_file()
    df = load_forecastbench_questions(columns=["qid", "source", "question_type", "outcome"])
    assert len(df) == 18021  # DATA_CARD.md counts
    assert df["qid"].is_unique
    assert (df["question_type"] == "market").sum() == 1020 + 537 + 309 + 182
    assert set(df["outcome"].unique()) == {0, 1}


def test_bundled_human_forecasts_and_the_one_reader():
    h = load_forecastbench_human_forecasts()
    assert len(h) == 5375  # DATA_CARD.md: 4,797 individual forecasts + 578 per-item medians
    medians = h[h["forecaster_type"] == "human_superforecaster_median"]
    assert len(medians) == 578 and medians["qid"].is_unique
    from benchmarks.questions import forecastbench_table, superforecaster_counts, superforecaster_medians

    assert superforecaster_counts() == dict(zip(medians["qid"], medians["n_forecasters"].astype(int)))
    assert superforecaster_medians() == dict(zip(medians["qid"], medians["p_yes"].astype(float)))
    table = forecastbench_table()  # the same rows as the raw read, plus parsed dates
    assert table["qid"].tolist() == load_forecastbench_questions(columns=["qid"])["qid"].tolist()
    assert str(table["resolution_ts"].iloc[0].date()) == table["resolution_date"].iloc[0]


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.parquet"):
        load_forecastbench_questions(tmp_path / "nope.parquet")
    with pytest.raises(FileNotFoundError, match="human forecast file not found: .*other.parquet"):
        load_forecastbench_human_forecasts(tmp_path / "other.parquet")
