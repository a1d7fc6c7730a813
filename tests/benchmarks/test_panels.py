"""Panels (issue 31, item 1): aggregate any panel of forecasts, from the user's side (the CLI and the public
functions), with hand-computed values, bad files, the bundled superforecaster panel's figures, export and
read back, and a panel's members reconciled by debate and supervisor."""

from pathlib import Path

from typer.testing import CliRunner

from benchmarks.cli import app
from tests.benchmarks.test_cli_errors import one_line_error

runner = CliRunner()


# --- the reader shared with score ----------------------------------------------------------------


def test_score_refuses_a_second_row_of_one_method_for_one_question(tmp_path):
    # before the panel reader shared score's, a repeated row was scored twice (Brier 0.1800 instead of 0.1450)
    f = tmp_path / "f.csv"
    f.write_text("question_id,p_yes,outcome\na,0.5,1\nb,0.2,0\na,0.5,1\n")
    one_line_error(runner.invoke(app, ["score", str(f), "--no-baselines"]), str(f), "data row 3 (line 4)", "'question_id'",
                   "a second forecast of method 'f'", "data row 1 (line 2)")
