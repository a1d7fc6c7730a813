"""The one owner of stored text (agent_providers.storable): what it changes, and that it changes nothing else."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from agent_providers.storable import storable_json, storable_text


@pytest.mark.parametrize(("text", "stored"), [
    ("a \ud800 b \udfff", "a \ufffd b \ufffd"),
    ("sk-" "ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0De.", "***."),
    ("token ghp_" "abcdefghijklmnopqrstuvwxyz0123 end", "token *** end"),
    ("Authorization: Bearer abc123def456ghi789", "Authorization: Bearer ***"),
    ('"password": "hunter2-is-long"', '"password": "***"'),
    ("see https://u:pw@h.example/v1;key=K-123-abc?x=1&token=T9#top", "see https://***@h.example/v1;key=***?x=1&token=***#top"),
    ('<a href="https://x.example/a?b=1&amp;key=SECRET-1234">', '<a href="https://x.example/a?b=1&amp;key=***">'),
])
def test_what_is_replaced(text, stored):
    assert storable_text(text) == stored
    assert storable_text(stored) == stored  # idempotent


@pytest.mark.parametrize("text", [
    "plain prose, 70% likely; the task-force met", "bearer bonds and bearer instruments",
    "https://en.wikipedia.org/wiki/List_of_Formula_One_World_Drivers_Champions_2024",
    "https://github.com/o/r/commit/3f2a9c1e4b5d6f7a8b9c0d1e2f3a4b5c6d7e8f90",
    "https://www.polymarket.com/event/will-bitcoin-reach-100k-in-2025?tid=1734567890123",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "openai-compatible/m@http://127.0.0.1:8080/v1?key=***", "gpt-4o-mini-2024-07-18",
])
def test_text_without_a_secret_or_a_surrogate_is_unchanged(text):
    assert storable_text(text) == text


def test_a_secret_in_a_json_line_leaves_valid_json():
    line = json.dumps({"r": 'say "sk-' 'proj-AbCdEf0123456789GhIjKlMn" \\ https://h.example/v1?key=Q-1\\"x'},
                      ensure_ascii=False)
    assert json.loads(storable_text(line)) == {"r": 'say "***" \\ https://h.example/v1?key=***\\"x'}


def test_a_configured_key_is_replaced_by_its_value(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "plain-value-without-shape-42")
    monkeypatch.setenv("UNRELATED_SETTING", "plain-value-kept-as-is-42")
    assert storable_text("a plain-value-without-shape-42 b plain-value-kept-as-is-42") == "a *** b plain-value-kept-as-is-42"


class _Model(BaseModel):
    text: str
    items: dict[str, list[str]] = {}


def test_a_model_with_a_lone_surrogate_is_written_as_json_with_the_replacement_character():
    plain = _Model(text="ok", items={"k": ["v"]})
    assert storable_json(plain) == plain.model_dump_json()  # the same bytes as before when nothing is replaced
    broken = _Model(text="a\ud800", items={"k\udc00": ["v\ud800"]})
    assert json.loads(storable_json(broken)) == {"text": "a\ufffd", "items": {"k\ufffd": ["v\ufffd"]}}
    assert json.loads(storable_json(broken, indent=1)) == json.loads(storable_json(broken))


def _texts_near_every_rule() -> list[str]:
    """Texts that hold each trigger of a rule, alone and in ASCII and non-ASCII surroundings (two- and four-byte
    characters, the two characters whose lower case is ASCII), with and without something to replace."""
    triggers = ["sk-" "ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0De", "sk-short", "risk-free", "mark_up", "ghp_" "abcdefghijklmnopqrstuvwxyz0123",
                "musk-" "proj-AbCdEf0123456789GhIjKlMn", "SK-" "proj-AbCdEf0123456789GhIjKlMn", "rk_" "live_" "0123456789abcdefGHIJ",
                "hp_" "abcdefghijklmnopqrstuvwxyz0123", "hf_" "abcdefghijklmnopqrstuvwxyz0123",
                "hf_x", "xoxb-" "1234567890-abcdef", "AIza" + "B" * 35, "BEARER abc123def456ghi789", "Bearer bonds",
                "API_KEY=abcdefgh123", "Api-Key: x", "\"Password\": \"hunter2-is-long\"", "passwd", "client-secret=Zz9aaaaaaaa",
                "API_\u212aEY=abcdefgh123", "AP\u0130_KEY=abcdefgh123", "https://u:pw@h.example/v1;key=K-123-abc?x=1",
                "https://en.wikipedia.org/wiki/Brier_score", "ftp://h.example/a?token=T9", "plain words only", "", "\ud800"]
    around = [("", ""), ("x ", " y"), ("— ", " —"), ("😀", "😀"), ("\u212a ", ""), ("", " \u0130"), ('{"a": "', '"}'),
              ("x", ""), ("-", ""), ("_", ""), ("9", ""), ("é", ""), ("X", "x"), ("g", "")]
    return [f"{a}{t}{b}" for t in triggers for a, b in around] + ["".join(triggers), "\n".join(triggers).lower()]


@pytest.mark.parametrize("text", _texts_near_every_rule())
def test_the_fast_path_stores_what_every_rule_in_turn_stores(text, monkeypatch):
    from agent_providers.storable import _replaced, known_secrets

    monkeypatch.setenv("EXAMPLE_API_KEY", "exact-value-1234")
    for t in (text, text + " exact-value-1234", "\u00e9" + text):
        assert storable_text(t) == _replaced(t, known_secrets())
