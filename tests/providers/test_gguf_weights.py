"""The embedded model's weight formats: the packaged GGUF as shipped, or re-encoded as Q8_0 by llama.cpp."""

from __future__ import annotations

import logging
import os

import pytest

from agent_providers.gguf_weights import converted_path, weights_cache_dir, weights_file
from tests.helpers import NEEDS_LLAMA

pytestmark = NEEDS_LLAMA


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FORECAST_RECONCILE_MODEL_CACHE", str(tmp_path / "m"))
    assert weights_cache_dir() == tmp_path / "m"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("FORECAST_RECONCILE_MODEL_CACHE", "~/models")
    assert weights_cache_dir() == tmp_path / "models"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORECAST_RECONCILE_MODEL_CACHE", "rel")
    assert weights_cache_dir() == tmp_path / "rel"  # absolute: a later chdir does not move it
    monkeypatch.delenv("FORECAST_RECONCILE_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert weights_cache_dir() == tmp_path / "xdg" / "forecast-reconcile" / "models"


def test_a_converted_copy_is_named_by_the_sources_content(tmp_path):
    a, b = tmp_path / "a" / "m.gguf", tmp_path / "b" / "m.gguf"
    for path, body in ((a, b"GGUF one"), (b, b"GGUF two")):
        path.parent.mkdir()
        path.write_bytes(body)
    cache = tmp_path / "cache"
    pa, pb = converted_path(a, "q8_0", cache), converted_path(b, "q8_0", cache)
    assert pa.parent == cache and pa.name.startswith("m.") and pa.name.endswith(".q8_0.gguf")
    assert len(pa.name.split(".")[1]) == 16 and pa != pb  # same name, other content: another copy
    assert weights_file(a, "packaged", cache) == a and not cache.exists()  # as shipped: nothing written
    with pytest.raises(ValueError, match="^weights must be one of packaged, q8_0, got 'q4_0'$"):
        weights_file(a, "q4_0", cache)


def test_a_file_llama_cpp_cannot_convert_raises_and_leaves_nothing(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf at all")
    cache = tmp_path / "cache"
    with pytest.raises(RuntimeError, match=r"^llama.cpp could not convert .*bad.gguf to q8_0 \(llama_model_quantize returned"):
        weights_file(bad, "q8_0", cache)
    assert list(cache.iterdir()) == []  # no torn or temporary file


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FORECAST_RECONCILE_MODEL_CACHE", str(tmp_path / "models"))
    return tmp_path / "models"


def test_smollm2_is_loaded_as_q8_0_converted_once(cache):
    import llama_cpp

    from agent_providers.local_llama import LocalLlamaProvider, smollm2_path
    from agent_schemas import BadRequest

    p = LocalLlamaProvider(n_threads=1, n_slots=1)
    assert (p.model, p.weights, p.source_path) == ("smollm2-q8_0", "q8_0", smollm2_path())
    assert p.model_path.parent == cache and p.model_path.name.endswith(".q8_0.gguf")
    assert [f.name for f in cache.iterdir()] == [p.model_path.name]
    assert p.llama.metadata["general.file_type"] == str(int(llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0))
    assert p.model_path.stat().st_size > smollm2_path().stat().st_size  # 8 bits instead of 4 and a half
    mtime = p.model_path.stat().st_mtime_ns
    again = LocalLlamaProvider(n_threads=1, n_slots=1)
    assert again.model_path == p.model_path and p.model_path.stat().st_mtime_ns == mtime  # not converted again
    c = p.complete([{"role": "user", "content": "Is water wet? a=1 for yes."}], max_tokens=32, temperature=0.0,
                   json_schema={"type": "object", "properties": {"a": {"type": "integer", "enum": [0, 1]}}, "required": ["a"]})
    assert c.model == "smollm2-q8_0" and c.provider == "local/smollm2-q8_0" and c.usage.output_tokens > 0
    # the served spec names the weights and builds the same provider again (replays, resumed runs)
    from agent_providers import get_provider

    rebuilt = get_provider(c.provider, n_threads=1, n_slots=1)
    assert (rebuilt.model, rebuilt.weights, rebuilt.model_path) == ("smollm2-q8_0", "q8_0", p.model_path)
    assert get_provider("local/smollm2-packaged", n_threads=1, n_slots=1).model == "smollm2"
    with pytest.raises(BadRequest, match="^local model 'smollm2-q8_0' names q8_0 weights, but weights='packaged' was given$"):
        LocalLlamaProvider("smollm2-q8_0", weights="packaged")

    packaged = LocalLlamaProvider(weights="packaged", n_threads=1, n_slots=1)
    assert (packaged.model, packaged.model_path) == ("smollm2", smollm2_path())
    assert packaged.llama.metadata["general.file_type"] == str(int(llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_1))


def test_a_file_of_your_own_is_loaded_as_it_is_unless_asked(cache):
    from agent_providers.local_llama import LocalLlamaProvider, smollm2_path

    own = LocalLlamaProvider(model_path=smollm2_path(), n_threads=1, n_slots=1)
    assert (own.model, own.weights, own.model_path) == (smollm2_path().stem, "packaged", smollm2_path())
    converted = LocalLlamaProvider(str(smollm2_path()), weights="q8_0", n_threads=1, n_slots=1)
    assert converted.model == f"{smollm2_path()}-q8_0" and converted.model_path.parent == cache


def test_an_unwritable_cache_falls_back_to_the_packaged_weights_and_says_so(tmp_path, monkeypatch, caplog):
    from agent_providers.local_llama import LocalLlamaProvider, smollm2_path
    from agent_schemas import BadRequest

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("FORECAST_RECONCILE_MODEL_CACHE", str(blocker / "models"))  # under a file: mkdir fails
    with caplog.at_level(logging.WARNING, logger="agent_providers.local_llama"):
        p = LocalLlamaProvider(n_threads=1, n_slots=1)
    assert (p.model, p.weights, p.model_path) == ("smollm2", "packaged", smollm2_path())
    (record,) = [r for r in caplog.records if r.name == "agent_providers.local_llama"]
    assert record.getMessage().startswith(f"cannot keep q8_0 weights of {smollm2_path().name} (")
    assert record.getMessage().endswith("): loading the packaged weights")
    with pytest.raises(BadRequest, match="^weights must be one of packaged, q8_0, got 'f16'$"):
        LocalLlamaProvider(weights="f16")
    assert not os.path.exists(blocker / "models")


def test_the_converted_model_keeps_smollm2s_training_cutoff():
    from benchmarks.protocol.model_cutoffs import training_cutoff

    assert training_cutoff("local/smollm2-q8_0") == training_cutoff("local/smollm2") == training_cutoff("smollm2-q8_0")


def test_a_damaged_converted_copy_is_made_anew_and_a_damaged_file_of_your_own_is_a_bad_request(cache, tmp_path, caplog):
    from agent_providers.local_llama import LocalLlamaProvider, smollm2_path
    from agent_schemas import BadRequest

    damaged = converted_path(smollm2_path(), "q8_0", cache)
    cache.mkdir(parents=True)
    damaged.write_bytes(b"GGUF" + b"\0" * 100)  # e.g. a disk that filled up under another tool
    with caplog.at_level(logging.WARNING, logger="agent_providers.local_llama"):
        p = LocalLlamaProvider(n_threads=1, n_slots=1)
    assert p.model_path == damaged and damaged.stat().st_size > 100_000_000 and p.model == "smollm2-q8_0"
    assert any(r.getMessage().startswith(f"the q8_0 copy {damaged} does not load (") for r in caplog.records)
    own = tmp_path / "own.gguf"
    own.write_bytes(b"GGUF" + b"\0" * 100)
    with pytest.raises(BadRequest, match=r"^llama.cpp cannot load '.*own.gguf': Failed to load model from file"):
        LocalLlamaProvider(model_path=own, n_threads=1, n_slots=1)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agent_providers.local_llama"):  # the quantizer fails first
        with pytest.raises(BadRequest, match=r"^llama.cpp cannot load '.*own.gguf'"):
            LocalLlamaProvider(model_path=own, weights="q8_0", n_threads=1, n_slots=1)
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == ["cannot keep q8_0 weights of own.gguf"]


def test_the_temporary_file_of_a_killed_conversion_is_removed_by_the_next_one(cache):
    from agent_providers.gguf_weights import STALE_PART_S
    from agent_providers.local_llama import smollm2_path

    target = converted_path(smollm2_path(), "q8_0", cache)
    cache.mkdir(parents=True)
    stale, fresh = (target.parent / f"{target.name}.{tag}.part" for tag in ("killed", "running"))
    for part in (stale, fresh):
        part.write_bytes(b"half a model")
    old = stale.stat().st_mtime - STALE_PART_S - 10
    os.utime(stale, (old, old))
    assert weights_file(smollm2_path(), "q8_0", cache) == target
    assert sorted(p.name for p in cache.iterdir()) == sorted([target.name, fresh.name])  # a running one stays


def test_a_damaged_copy_that_cannot_be_made_again_falls_back_to_the_packaged_weights(cache, monkeypatch, caplog):
    """A read-only cache holding a damaged copy: the copy does not load and cannot be replaced."""
    import agent_providers.local_llama as local_llama
    from agent_providers.local_llama import LocalLlamaProvider, smollm2_path

    damaged = converted_path(smollm2_path(), "q8_0", cache)
    cache.mkdir(parents=True)
    damaged.write_bytes(b"GGUF" + b"\0" * 100)
    calls = []

    def read_only(source, weights, cache_dir=None):
        calls.append(weights)
        if len(calls) > 1:
            raise OSError(30, "Read-only file system")
        return damaged

    monkeypatch.setattr(local_llama, "weights_file", read_only)
    with caplog.at_level(logging.WARNING, logger="agent_providers.local_llama"):
        p = LocalLlamaProvider(n_threads=1, n_slots=1)
    assert (p.model, p.weights, p.model_path) == ("smollm2", "packaged", smollm2_path()) and calls == ["q8_0", "q8_0"]
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        f"the q8_0 copy {damaged} does not load", "cannot keep q8_0 weights of SmolLM2-135M-Instruct.Q4_1.gguf"]


def test_stale_temporary_files_go_also_when_the_copy_exists(cache):
    from agent_providers.gguf_weights import STALE_PART_S
    from agent_providers.local_llama import smollm2_path

    target = weights_file(smollm2_path(), "q8_0", cache)
    stale = target.parent / f"{target.name}.killed.part"
    stale.write_bytes(b"half")
    old = stale.stat().st_mtime - STALE_PART_S - 10
    os.utime(stale, (old, old))
    assert weights_file(smollm2_path(), "q8_0", cache) == target and not stale.exists()
