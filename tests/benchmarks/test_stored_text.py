"""Any text a model or a search result gives is storable, and no key is stored (issue 35, item 4: "one reply kills a
run", "secrets"), checked on the files of a real run folder: the harness, the OpenAI SDK against the loopback fake
server, the response cache, and the report page written from the folder.

* A lone surrogate (the JSON escape ``\\ud800`` in an answer, valid JSON, read by ``json.loads`` into a string that
  UTF-8 cannot encode; or one in a search result) is stored as U+FFFD: the records are written, the run completes
  and every billed call stays in the ledgers (before: a serialisation error stopped the run, exit 2, 0 records).
* A key is never stored verbatim in the results (the trace included), the cache, the manifest or the page: the
  configured key echoed by the model, a key variable's value, well-known key shapes, and URL credentials (user
  info, a secret query value, a key as a path segment, a ``;key=`` parameter). Each is a row.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_providers.openai_provider import OpenAIProvider
from agent_research.config import PipelineConfig
from agent_schemas import SearchResult
from benchmarks.harness.config import RunConfig
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.report import write_report
from benchmarks.run_folder import read_records
from tests.doubles.fake_api import FakeProviderAPI
from tests.helpers import FixedSearch, make_question

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

#: The key the run's provider is configured with, and a key variable's value (neither has a key's usual shape).
CONFIGURED_KEY = "test-configured-KEY-7c1e9a55d2"
ENV_KEY = "env-anthropic-VALUE-00ab12cd34ef"

#: (text a model or a search result writes, the secret in it that must not be stored)
SECRETS = {
    "the configured key, echoed": (f"my key is {CONFIGURED_KEY} ok", CONFIGURED_KEY),
    "a key variable's value, echoed": (f"env: {ENV_KEY}.", ENV_KEY),
    "an Anthropic key shape": ("sk-" "ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0De", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0De"),
    "an OpenAI key shape": ("key sk-" "proj-AbCdEf0123456789GhIjKlMnOp here", "AbCdEf0123456789GhIjKlMnOp"),
    "a Bearer token": ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.Zm9vYmFyMTIz", "eyJhbGciOiJIUzI1NiJ9.e30.Zm9vYmFyMTIz"),
    "an api_key assignment": ("set api_key=Q7w8E9r0T1y2U3i4 then", "Q7w8E9r0T1y2U3i4"),
    "URL user info": ("https://alice:pa55-W0rd-XYZ@api.example.com/v1/chat", "pa55-W0rd-XYZ"),
    "URL query key": ("https://api.example.com/v1/chat?api-version=2024-06-01&key=QK-123-secret-val", "QK-123-secret-val"),
    "URL key as a path segment": ("https://eth.example.com/v2/Ab3dE9fGh1JkL2mN4pQr5StU6vWx7Yz8/rpc",
                                  "Ab3dE9fGh1JkL2mN4pQr5StU6vWx7Yz8"),
    "URL path after a key name": ("https://api.example.com/key/x81f-22ab-secret9/data", "x81f-22ab-secret9"),
    "URL ;key= parameter": ("https://maps.example.com/tiles;key=Zq81-secretvalue;v=2/3.png", "Zq81-secretvalue"),
    "URL ;token= in a segment": ("https://cdn.example.com/a;token=Tok-99-abc-secret/b.js", "Tok-99-abc-secret"),
}
#: Text that looks a little like a secret but is not one: stored exactly.
KEPT = ["https://www.metaculus.com/questions/12345/will-x-happen/?tid=1234567890",
        "gpt-4o-mini-2024-07-18", "bearer bonds", "https://example.com/a;v=2/b?api-version=2024-06-01",
        "commit 3f2a9c1e4b5d6f7a8b9c0d1e2f3a4b5c6d7e8f90"]


def _answer(rationale_json: str) -> str:
    """One object that is both a query answer and a forecast (the fake server does not tell the roles apart)."""
    return ('{"queries": ["polls"], "rationale": ' + rationale_json + ', "key_evidence": [{"claim": ' + rationale_json
            + ', "source": 1}], "confidence": "low", "p_yes_percent": 40}')


def _run(tmp_path: Path, answer: str, results: list[SearchResult], monkeypatch) -> tuple[BenchmarkRunner, FakeProviderAPI]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    server = FakeProviderAPI(answer=lambda messages: answer)
    pipeline = PipelineConfig(n_members=2, debate=None, supervisor=None, concurrency=None)
    config = RunConfig(output_dir=str(tmp_path), run_id="r", providers=["openai/gpt-4.1-mini"], search="local",
                       methods=["mean"], baselines=[], cache=True, pipeline=pipeline)
    runner = BenchmarkRunner(config, provider_factory=lambda spec: OpenAIProvider(
        "gpt-4.1-mini", api_key=CONFIGURED_KEY, base_url=server.url + "/v1"), search_client=FixedSearch(results),
        questions=[make_question("q1"), make_question("q2")], progress=False, rate_limit=False)
    try:
        asyncio.run(runner.arun())
    finally:
        server.close()
    return runner, server


def _stored_files(runner: BenchmarkRunner, tmp_path: Path) -> list[Path]:
    report = write_report([runner.run_dir], tmp_path / "report", n_resamples=20)
    files = [f for d in (runner.run_dir, tmp_path / "report") for f in d.rglob("*") if f.is_file()]
    names = {f.name for f in files}
    assert {"results.jsonl", "manifest.json", "report.html", "cache.db"} <= names, names
    assert report.html_path.is_file()
    return files


# --- lone surrogates ---------------------------------------------------------------------------------------------------
SURROGATES = {
    "an answer's JSON escape \\ud800": ("answer", r'"held \ud800 steady"'),
    "an answer's JSON escape \\udfff in the evidence": ("answer", r'"low \udfff base rate"'),
    "a search result's snippet": ("search", "snippet"),
    "a search result's title and URL": ("search", "title"),
}


@pytest.mark.parametrize("where, what", SURROGATES.values(), ids=SURROGATES.keys())
def test_a_lone_surrogate_from_a_model_or_a_search_result_is_stored_and_the_run_completes(where, what, tmp_path,
                                                                                          monkeypatch):
    answer = _answer(what if where == "answer" else '"steady"')
    result = SearchResult(title="Poll", url="https://news.example.com/poll", snippet="Polls lean no.", source="news")
    if where == "search":
        result = result.model_copy(update={what: "Polls \ud800 lean no", "url": "https://news.example.com/\udc00poll"}
                                   if what == "title" else {what: "Polls \ud800 lean no"})
    runner, server = _run(tmp_path, answer, [result], monkeypatch)
    records = read_records(runner.run_dir / "results.jsonl")
    assert [r["status"] for r in records] == ["ok", "ok"]
    assert [r["methods"]["mean"]["p_yes"] for r in records] == [0.4, 0.4]
    # every billed call is in the ledgers: 2 questions x 2 members (the search query is the question's own, no call)
    assert sum(e["calls"] for r in records for e in r["ledger"]) == len(server.accepted) == 4
    text = (runner.run_dir / "results.jsonl").read_text(encoding="utf-8")
    assert "\ufffd" in text and ("Polls \ufffd lean no" in text) == (where == "search")
    for f in _stored_files(runner, tmp_path):  # the report is written from the folder, every text file strict UTF-8
        if f.suffix in (".jsonl", ".json", ".html", ".csv", ".md"):
            f.read_text(encoding="utf-8")


# --- secrets -------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def secret_run(tmp_path_factory):
    """One run whose model echoes every row's text in its rationale and evidence, and whose search result carries
    them in its title, URL and snippet; the folder and its report."""
    tmp_path = tmp_path_factory.mktemp("secrets")
    everything = " | ".join([t for t, _ in SECRETS.values()] + KEPT)
    answer = _answer(json.dumps(everything))
    result = SearchResult(title=everything[:300], url=SECRETS["URL ;key= parameter"][0], snippet=everything,
                          source="news")
    with pytest.MonkeyPatch.context() as mp:
        runner, server = _run(tmp_path, answer, [result], mp)
        files = _stored_files(runner, tmp_path)
    return runner, files


@pytest.mark.parametrize("text, secret", SECRETS.values(), ids=SECRETS.keys())
def test_no_key_is_stored_in_results_cache_manifest_or_page(secret_run, text, secret):
    runner, files = secret_run
    records = read_records(runner.run_dir / "results.jsonl")
    assert [r["status"] for r in records] == ["ok", "ok"]
    for f in files:
        assert secret.encode() not in f.read_bytes(), f"{secret} stored in {f}"
    assert "***" in (runner.run_dir / "results.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("text", KEPT)
def test_text_that_is_no_secret_is_stored_as_written(secret_run, text):
    runner, _ = secret_run
    assert text in (runner.run_dir / "results.jsonl").read_text(encoding="utf-8")
