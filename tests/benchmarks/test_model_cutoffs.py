"""Model cutoffs are matched on the model name alone, whole (issue 29, fault 1).

The spec's provider prefix, an organisation prefix and the server URL are never read: ``marco-o1`` is not
o1, ``Skywork-o1-Open-Llama-3.1-8B`` is not o1, and a URL path holding ``gpt-4o`` does not give the model
served there GPT-4o's cutoff. An unknown name fails closed (the run asks for ``--date-from``).
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.protocol.model_cutoffs import MODEL_CUTOFFS, lookup_model, model_name, training_cutoff

runner = CliRunner()

#: Names that contain a known model's name but are other models; before the fix each took that cutoff.
LOOKALIKES = [
    "openai-compatible/marco-o1@http://127.0.0.1:9/v1",                 # o1's 2023-10-31
    "openai-compatible/Skywork-o1-Open-Llama-3.1-8B@http://127.0.0.1:9/v1",
    "openai-compatible/llama-3.3-70b@http://127.0.0.1:9/gpt-4o/v1",     # only the URL names gpt-4o
    "openai-compatible/llama-3.3-70b@http://gpt-4o.example:8080/v1",
    "openai-compatible/deepseek-r1-distill-o3-mini@http://127.0.0.1:9/v1",
    "openai-compatible/my-claude-sonnet-4-5-finetune@http://127.0.0.1:9/v1",
    "openai-compatible/smollm2-135m-instruct-my-finetune@http://127.0.0.1:9/v1",
    "openai/gpt-4o-audio-preview-foo",
    "openai/o1o1",
]


@pytest.mark.parametrize("spec", LOOKALIKES)
def test_a_name_that_only_contains_a_known_models_name_has_no_cutoff(spec):
    assert lookup_model(spec) is None and training_cutoff(spec) is None


@pytest.mark.parametrize(("spec", "name"), [
    ("openai-compatible/marco-o1@http://127.0.0.1:9/gpt-4o/v1", "marco-o1"),
    ("openai-compatible/openai/gpt-4o@https://user:secret@openrouter.example/api/v1", "gpt-4o"),
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
    ("local/smollm2-q8_0", "smollm2-q8-0"),
    ("openai-compatible/HuggingFaceTB/SmolLM2-135M-Instruct@http://127.0.0.1:8080/v1", "smollm2-135m-instruct"),
    ("openai-compatible/smollm2:135m@http://127.0.0.1:11434/v1", "smollm2-135m"),
    ("o3-pro", "o3-pro"),
])
def test_the_model_name_is_the_last_path_part_before_the_url(spec, name):
    assert model_name(spec) == name


@pytest.mark.parametrize(("spec", "expected"), [
    ("openai-compatible/openai/gpt-4o@http://127.0.0.1:9/v1", "GPT-4o"),      # an organisation prefix
    ("openai/gpt-4o-2024-08-06", "GPT-4o"),                                   # a dated snapshot
    ("openai/gpt-4o-mini-2024-07-18", "GPT-4o mini"),
    ("anthropic/claude-sonnet-4-5-20250929", "Claude Sonnet 4.5"),
    ("anthropic/claude-opus-4-20250514", "Claude Opus 4"),
    ("openai/gpt-4.1-nano", "GPT-4.1"),                                      # variants the table lists
    ("openai/o3-pro", "o3"),
    ("openai/o1-2024-12-17", "o1"),
    ("openai-compatible/smollm2:135m@http://127.0.0.1:11434/v1", "SmolLM2-135M-Instruct"),
    ("openai-compatible/HuggingFaceTB/SmolLM2-360M-Instruct@http://127.0.0.1:8080/v1", "SmolLM2-135M-Instruct"),
    ("local/smollm2-packaged", "SmolLM2-135M-Instruct"),
])
def test_whole_names_snapshots_and_listed_variants_match(spec, expected):
    assert lookup_model(spec).name == expected


def test_each_name_of_the_table_matches_its_own_entry_only():
    for entry in MODEL_CUTOFFS:
        for example in entry.examples:
            assert lookup_model(example) is entry, (entry.name, example)
            assert [e.name for e in MODEL_CUTOFFS if e.matches(model_name(example))] == [entry.name], example


def test_a_dry_run_of_a_lookalike_model_stops_and_asks_for_a_date_instead_of_taking_o1s_cutoff(tmp_path):
    res = runner.invoke(app, ["run", "-p", "openai-compatible/marco-o1@http://127.0.0.1:9/v1", "--n", "200",
                              "--dry-run", "-o", str(tmp_path), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert "training cutoff unknown for openai-compatible/marco-o1@http://127.0.0.1:9/v1" in res.stderr
    assert "--date-from" in res.stderr


def test_a_dry_run_of_a_lookalike_model_with_a_date_rests_on_that_date_alone(tmp_path):
    res = runner.invoke(app, ["run", "-p", "openai-compatible/marco-o1@http://127.0.0.1:9/v1", "--n", "200",
                              "--date-from", "2025-06-01", "--dry-run", "-o", str(tmp_path), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "2023-10-31" not in res.stdout  # o1's cutoff is nowhere
    assert ("contamination filter: training cutoff unknown for openai-compatible/marco-o1@http://127.0.0.1:9/v1: "
            "questions due on or after 2025-06-01 (--date-from)") in " ".join(res.stdout.split())  # the line wraps
    listed = re.findall(r"^ [0-9a-f]{8}  (\d{4}-\d{2}-\d{2})  ", res.stdout, re.M)
    assert len(listed) == 20 and min(listed) >= "2025-06-01"


# --- issue 35, item 4: a name admits only what the model is published under ---------------------------------------------
#: SmolLM2 under every llama.cpp quantisation name (and Ollama's fp16): each is SmolLM2.
SMOLLM2_QUANTS = ["q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q2_k_s", "q3_k_s", "q3_k_m", "q3_k_l", "q4_k_s",
                  "q4_k_m", "q5_k_s", "q5_k_m", "q6_k", "q4_0_4_4", "q4_0_8_8", "iq1_s", "iq1_m", "iq2_xxs", "iq2_xs",
                  "iq2_s", "iq2_m", "iq3_xxs", "iq3_xs", "iq3_s", "iq3_m", "iq4_nl", "iq4_xs", "tq1_0", "tq2_0", "f16",
                  "fp16", "bf16", "f32", "Q4_K_M", "IQ4_XS"]


@pytest.mark.parametrize("quant", SMOLLM2_QUANTS)
def test_smollm2_under_a_real_quantisation_name_is_smollm2(quant):
    for spec in (f"local/smollm2-{quant}", f"openai-compatible/SmolLM2-135M-Instruct-{quant}@http://127.0.0.1:8080/v1",
                 f"openai-compatible/smollm2:135m-instruct-{quant}@http://127.0.0.1:11434/v1"):
        assert lookup_model(spec).name == "SmolLM2-135M-Instruct", spec


#: Fine-tunes and other models named like a quantised SmolLM2: each took SmolLM2's 2024-11-30 before (fails open).
SMOLLM2_LOOKALIKES = ["smollm2-q4-mytune", "smollm2-q4-dpo-v2", "smollm2-135m-instruct-q8-0-dpo", "smollm2-iq4-xyz",
                      "smollm2-q4-k-m-finetune", "smollm2-q9-0", "smollm2-q4-k-x", "smollm2-iq2-foo-bar",
                      "smollm2-q4-2026-06-01", "SmolLM2-135M-Instruct-Q4_K_M-medical"]


@pytest.mark.parametrize("name", SMOLLM2_LOOKALIKES)
def test_a_finetune_named_like_a_quantised_smollm2_has_no_cutoff(name):
    assert training_cutoff(f"openai-compatible/{name}@http://127.0.0.1:9/v1") is None


#: A dated snapshot takes its model's cutoff only when it is a snapshot the table lists (else unknown, fail closed).
UNKNOWN_SNAPSHOTS = ["openai/gpt-4o-2026-06-01", "openai/gpt-4o-20260601", "openai/gpt-4o-mini-2025-12-01",
                     "anthropic/claude-sonnet-4-5-20991231", "anthropic/claude-sonnet-4-20260101",
                     "openai/o3-2027-01-01", "openai/gpt-4.1-2026-04-14", "anthropic/claude-opus-4-1-20250806",
                     "openai/o1-2023-01-01", "local/smollm2-20260101"]


@pytest.mark.parametrize("spec", UNKNOWN_SNAPSHOTS)
def test_an_unknown_dated_snapshot_has_no_cutoff(spec):
    assert lookup_model(spec) is None and training_cutoff(spec) is None


@pytest.mark.parametrize(("spec", "expected"), [
    ("openai/gpt-4o-2024-05-13", "GPT-4o"), ("openai/gpt-4o-2024-11-20", "GPT-4o"), ("openai/gpt-4o-20240806", "GPT-4o"),
    ("openai/gpt-4.1-nano-2025-04-14", "GPT-4.1"), ("openai/o3-pro-2025-06-10", "o3"),
    ("anthropic/claude-haiku-4-5-20251001", "Claude Haiku 4.5"), ("anthropic/claude-opus-4-5-20251101", "Claude Opus 4.5"),
])
def test_a_listed_snapshot_in_either_date_form_takes_its_models_cutoff(spec, expected):
    assert lookup_model(spec).name == expected


def test_every_listed_snapshot_is_its_entrys_and_dated():
    for entry in MODEL_CUTOFFS:
        for snapshot in entry.snapshots:
            assert re.search(r"-\d{4}-?\d{2}-?\d{2}$", snapshot), snapshot
            assert lookup_model(snapshot) is entry, snapshot


def test_a_dry_run_of_an_unknown_snapshot_stops_and_asks_for_a_date(tmp_path):
    res = runner.invoke(app, ["run", "-p", "openai/gpt-4o-2026-06-01", "--n", "200", "--dry-run", "-o", str(tmp_path),
                              "--no-progress"])
    assert res.exit_code == 2, res.output
    assert "training cutoff unknown for openai/gpt-4o-2026-06-01" in res.stderr and "--date-from" in res.stderr
