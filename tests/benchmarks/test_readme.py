"""The README reads as a user's guide (issue 38): the two commands first, then first steps, concepts and
reference; no measurement history (figures of "before issue N", commit ids) and no time it does not measure."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
CMAKE = 'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"'


def test_the_two_commands_come_first_then_first_steps_concepts_and_reference():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert blocks[0].strip() == f'{CMAKE} pip install -e ".[local,search]" && forecast-reconcile run'
    assert blocks[1].strip() == f'{CMAKE} pip install -e ".[local,search,notebooks,dev,frameworks]" && python -m pytest -q'
    positions = [README.index(h) for h in ("**Run the main job**", "**Run the tests:**", "**First steps**", "\n# Concepts\n",
                                            "\n# Reference\n")]
    assert positions == sorted(positions)
    concepts = README.split("\n# Concepts\n", 1)[1].split("\n# Reference\n", 1)[0]
    assert "## What the main job does" in concepts and "## Reading the leaderboard" in concepts


def test_no_measurement_history_and_no_unmeasured_time():
    assert not re.search(r"before issue \d+|--before [0-9a-f]{7}", README)
    # a duration such as "about 20 s", "1 to 2 minutes" or "5 to 15 minutes" is measured on one machine under one
    # load: the README leaves it to `time <command>` and benchmarks/perf/NOTES.md
    found = re.findall(r"(?:about|took|in) \d[\d.,]* ?(?:s|seconds?|min|minutes?)\b|\d+ (?:to|-) ?\d+ minutes", README)
    assert found == []
    notes = (Path(__file__).resolve().parents[2] / "benchmarks" / "perf" / "NOTES.md").read_text(encoding="utf-8")
    assert "main_job_profile.py --before 01f201d" in notes and "benchmarks/perf/scale.py" in notes
