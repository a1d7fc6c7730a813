"""Credentials in provider specs and URLs: redaction, secret query parameters, and log scrubbing.

A provider spec may carry credentials in its URL (``openai-compatible/<model>@<base_url>``). They must
never reach manifests, logs, errors, cache keys or traces, so everything the toolkit writes uses
:func:`redact_spec`:

* **User info** (``http://user:pass@host``) is removed. Adapters refuse it (the SDKs would send it as
  HTTP Basic auth to whatever host the URL names); send a key with ``api_key=`` or the provider's key
  variable instead.
* **Secret query values** (:func:`is_secret_query_param`: names such as ``key``, ``api_key``,
  ``token``, ``sig``, ``password``, or values that look like keys, e.g. ``sk-...``) are replaced by
  :data:`REDACTED` (``***``). Other query parameters (``api-version=...``) are kept: they change what
  the server does. The fragment is dropped.

A redacted spec still builds a provider: a query value equal to ``***`` is read back from the
environment variable :func:`query_env_var` names (``?key=***`` -> ``OPENAI_COMPATIBLE_QUERY_KEY``),
and building fails with :class:`AuthenticationFailed` naming that variable when it is unset. That is how
``run --resume`` gets query credentials back after the manifest stored only the redacted spec.

Log scrubbing: ``httpx2`` (the SDKs' HTTP client) logs every request URL at INFO, query string
included, so :func:`register_secret` adds each provider's key and secret query values to a filter on
the HTTP and SDK loggers that replaces them by ``***`` in every record.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agent_schemas import AuthenticationFailed, BadRequest

#: What a secret is replaced by in every string the toolkit writes.
REDACTED = "***"

# Words of a query parameter name that mark a credential (the name is split on non-alphanumerics;
# a word ending in one of _SECRET_SUFFIXES counts too: "apikey", "accesstoken", "clientsecret").
_SECRET_WORDS = frozenset({
    "key", "token", "secret", "password", "passwd", "pwd", "pass", "auth", "authorization", "sig",
    "signature", "credential", "credentials", "session", "sessionid", "cookie", "bearer", "jwt",
})
_SECRET_SUFFIXES = ("key", "token", "secret", "password")
# Values that look like keys whatever the parameter is called: common key prefixes, or a long run of
# base64url characters mixing letters and digits.
_SECRET_VALUE = re.compile(r"^(sk-|sk_|pk-|rk-|ghp_|gho_|github_pat_|xox[abpr]-|hf_|AIza)", re.IGNORECASE)
_TOKENISH = re.compile(r"^[A-Za-z0-9_\-\.~+/=]{24,}$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)

#: Loggers whose records may contain request URLs or keys; :func:`register_secret` scrubs them.
SCRUBBED_LOGGERS = ("httpx2", "httpx", "httpcore", "openai", "openai._base_client", "anthropic", "anthropic._base_client")


def redact(text: str, *secrets: str | None) -> str:
    """Replace every occurrence of each non-empty secret in ``text`` by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def is_secret_query_param(name: str, value: str) -> bool:
    """True when a URL query parameter carries a credential: by its name (``key``, ``api_key``,
    ``token``, ``access_token``, ``sig``, ``password``, ``auth``, ...) or by its value (``sk-...``,
    ``ghp_...``, a UUID, or 24+ base64url characters mixing letters and digits with at most two
    hyphens, so model names such as ``gpt-4o-mini-2024-07-18`` are not taken for keys)."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    if any(w in _SECRET_WORDS or w.endswith(_SECRET_SUFFIXES) for w in words):
        return True
    if _SECRET_VALUE.match(value):
        return True
    if _UUID.match(value):
        return True
    return (
        bool(_TOKENISH.match(value)) and value.count("-") <= 2
        and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    )


def query_env_var(name: str) -> str:
    """Environment variable holding the value of secret query parameter ``name`` of a compatible
    server's URL on resume: ``OPENAI_COMPATIBLE_QUERY_`` + the name upper-cased, every character other
    than a letter or digit replaced by ``_`` (``api-key`` -> ``OPENAI_COMPATIBLE_QUERY_API_KEY``)."""
    return "OPENAI_COMPATIBLE_QUERY_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


_B = r"(?<![A-Za-z0-9_-])"  # no key character before: not inside a word, a base64 blob or another key
_E = r"(?![A-Za-z0-9_-])"
#: Well-known key shapes (providers' documented prefixes): a secret wherever it appears.
KEY_SHAPES = re.compile(
    _B + r"(?:sk-ant-[A-Za-z0-9_-]{8,}|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{20,}"
    r"|AIza[0-9A-Za-z_-]{35})" + _E)
_USERINFO = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*)?://)([^/?#@\s]+)@")
#: A query (``?``/``&``, also ``&amp;`` in HTML) or ``;`` parameter: ``name=value``.
_PARAM = re.compile(r"([?&;])([^=&;#?/\s]+)=([^&;#?/\s]*)")
_ALNUM = re.compile(r"[A-Za-z0-9]{24,}")
_WORDLIKE = re.compile(r"[a-z]{7,}")
_KEY_NAMED_SEGMENT = re.compile(r"(?i)^(?:api[-_]?)?(?:key|keys|token|secret|apikey|access[-_]?token)$")


def looks_generated(segment: str) -> bool:
    """Whether a URL path segment has the shape of a generated key: 24+ letters and digits only, with at least 3
    digits, 3 upper-case and 3 lower-case letters and no run of 7 lower-case letters (a word). Slugs (words joined
    by ``-`` or ``_``), hex digests and numbers are not keys."""
    return (_ALNUM.fullmatch(segment) is not None and sum(c.isdigit() for c in segment) >= 3
            and sum(c.isupper() for c in segment) >= 3 and sum(c.islower() for c in segment) >= 3
            and _WORDLIKE.search(segment) is None)


def _segment(segment: str, previous: str) -> str:
    """A path segment (without its ``;`` parameters), or ``***`` when it is a key: a key shape, a generated key's
    shape (:func:`looks_generated`), or 8+ characters with a digit after a segment named like a key (``/key/...``)."""
    if (KEY_SHAPES.fullmatch(segment) or looks_generated(segment)
            or (_KEY_NAMED_SEGMENT.match(previous) and len(segment) >= 8 and any(c.isdigit() for c in segment))):
        return REDACTED
    return segment


def _param(m: re.Match[str]) -> str:
    sep, name, value = m.groups()
    if value and value != REDACTED and is_secret_query_param(name, value):
        return f"{sep}{name}={REDACTED}"
    return m.group(0)


def redact_path(path: str) -> str:
    """A URL path with every key in it replaced by ``***``: a segment that is a key (see :func:`_segment`) and the
    value of a secret ``;`` parameter (``/tiles;key=K`` -> ``/tiles;key=***``, :func:`is_secret_query_param`).

    >>> redact_path("/v2/Ab3dE9fGh1JkL2mN4pQr5StU6vWx7Yz8/tiles;key=Zq81-secret;v=2/news-2024-polls")
    '/v2/***/tiles;key=***;v=2/news-2024-polls'
    """
    parts = path.split("/")
    out = []
    for i, seg in enumerate(parts):
        name, semi, params = seg.partition(";")
        previous = parts[i - 1].partition(";")[0] if i else ""
        out.append(_segment(name, previous) + (_PARAM.sub(_param, semi + params) if semi else ""))
    return "/".join(out)


def path_secrets(path: str) -> list[str]:
    """The keys :func:`redact_path` replaces in ``path`` (key-shaped segments, secret ``;`` values): registered with
    a provider's other secrets, so they are scrubbed from its logs and kept out of every stored text too."""
    found = []
    for a, b in zip(path.split("/"), redact_path(path).split("/")):
        if a != b:
            for x, y in zip(re.split(r"([;=])", a), re.split(r"([;=])", b)):
                if x != y:
                    found.append(x)
    return found


def redact_url_in_text(url: str) -> str:
    """A URL as found in text, its keys replaced by ``***`` and everything else kept as written: the user info
    (``https://user:pw@host`` -> ``https://***@host``), the path (:func:`redact_path`) and secret query values.

    >>> redact_url_in_text("https://u:pw@h.example/v1;key=K-123-abc?x=1&token=T9#top")
    'https://***@h.example/v1;key=***?x=1&token=***#top'
    """
    url = _USERINFO.sub(rf"\1{REDACTED}@", url)
    start = url.index("://") + 3
    slash = url.find("/", start)
    if slash < 0:
        return _PARAM.sub(_param, url)
    cut = min((i for i in (url.find("?", slash), url.find("#", slash)) if i >= 0), default=len(url))
    return url[:slash] + redact_path(url[slash:cut]) + _PARAM.sub(_param, url[cut:])


def redact_url(url: str) -> str:
    """``url`` without user info and fragment, with secret query values and the keys in its path (:func:`redact_path`:
    key-shaped segments, secret ``;`` parameters) replaced by ``***``.

    >>> redact_url("http://u:S3CRET@127.0.0.1:8000/v1?key=QKEY&api-version=2024-06-01#frag")
    'http://127.0.0.1:8000/v1?key=***&api-version=2024-06-01'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # unparseable (e.g. a bad port): keep nothing that could be a credential
        return REDACTED
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port:
        host = f"{host}:{port}"
    query = [
        (k, REDACTED if is_secret_query_param(k, v) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit((parts.scheme, host, redact_path(parts.path), urlencode(query, safe="*"), ""))


def redact_spec(spec: str) -> str:
    """A provider spec safe to write anywhere: the URL part (``<prefix>/<model>@<url>``) without user
    info, fragment and secret query values (see :func:`redact_url`); other specs are returned as given.

    Parameters
    ----------
    spec : str
        A registry spec such as ``"openai-compatible/m@http://user:pw@host:8000/v1?key=K"``.

    Returns
    -------
    str
        E.g. ``"openai-compatible/m@http://host:8000/v1?key=***"``. Idempotent:
        ``redact_spec(redact_spec(s)) == redact_spec(s)``. Building a provider from it reads each
        ``***`` query value from :func:`query_env_var`.

    Examples
    --------
    >>> redact_spec("openai-compatible/qwen@http://user:S3CRET@127.0.0.1:8000/v1?key=QKEY")
    'openai-compatible/qwen@http://127.0.0.1:8000/v1?key=***'
    >>> redact_spec("anthropic/claude-sonnet-4-6")
    'anthropic/claude-sonnet-4-6'
    """
    if not isinstance(spec, str):
        return spec
    head, sep, url = spec.partition("@")
    if not sep or "://" not in url:
        return spec
    return f"{head}@{redact_url(url)}"


@dataclass(frozen=True)
class Endpoint:
    """A base URL split into what the SDK needs: the root without query (``base_url``), the query
    parameters to send with every request (``default_query``, secrets resolved) and the redacted form."""

    base_url: str
    """Scheme, host, port and path; no user info, query or fragment."""
    default_query: dict[str, str] = field(default_factory=dict)
    """Query parameters sent on every request (the SDK's ``default_query``), real values."""
    public_url: str = ""
    """The URL as written to specs and logs (:func:`redact_url`)."""
    secrets: tuple[str, ...] = ()
    """Secret query values, for scrubbing."""

    @property
    def is_plain_http_remote(self) -> bool:
        """True for ``http://`` to a host other than loopback (a key sent there travels in clear)."""
        parts = urlsplit(self.base_url)
        return parts.scheme == "http" and (parts.hostname or "") not in ("127.0.0.1", "localhost", "::1")


def parse_endpoint(url: str, *, environ: Mapping[str, str], what: str) -> Endpoint:
    """Split ``url`` into an :class:`Endpoint`.

    Parameters
    ----------
    url : str
        A base URL, possibly with a query string (``?key=...``) and ``***`` placeholders.
    environ : mapping
        Where ``***`` placeholders are read from (see :func:`query_env_var`).
    what : str
        Name used in error messages (the provider's redacted spec).

    Raises
    ------
    BadRequest
        If the URL has user info (``user:pass@``: refused, see module doc) or is not http(s).
    AuthenticationFailed
        If a query value is ``***`` and its environment variable is unset (the message names it).
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise BadRequest(f"{what}: base URL {redact_url(url)!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadRequest(f"{what}: base URL {redact_url(url)!r} must be http(s)://host[:port]/path")
    if parts.username is not None or parts.password is not None:
        raise BadRequest(
            f"{what}: credentials in the URL (user:password@host) are not used; send a key with api_key= or "
            "the OPENAI_COMPATIBLE_API_KEY environment variable, or put a query key in the URL (?key=...)"
        )
    query: dict[str, str] = {}
    secrets: list[str] = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if value == REDACTED:
            var = query_env_var(name)
            value = environ.get(var, "")
            if not value:
                raise AuthenticationFailed(
                    f"{what}: the query parameter {name!r} was stored redacted; set {var} to its value "
                    "(credentials are never written to manifests)"
                )
        if is_secret_query_param(name, value):
            secrets.append(value)
        query[name] = value
    secrets += path_secrets(parts.path)
    host = parts.netloc.rpartition("@")[2]
    base = urlunsplit((parts.scheme, host, parts.path, "", ""))
    return Endpoint(base_url=base, default_query=query, public_url=redact_url(url), secrets=tuple(secrets))


class _ScrubSecrets(logging.Filter):
    """Replace registered secrets by ``***`` in a log record's final message."""

    def __init__(self) -> None:
        super().__init__("agent_providers.credentials")
        # longest first, so a secret containing another is replaced whole; replaced, never mutated
        self._secrets: tuple[str, ...] = ()
        self._lock = threading.Lock()

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    def add(self, secrets: Iterable[str]) -> None:
        with self._lock:
            merged = set(self._secrets) | {s for s in secrets if s and len(s) >= 4}
            self._secrets = tuple(sorted(merged, key=len, reverse=True))

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = self._secrets
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's business
            return True
        if any(s in message for s in secrets):
            record.msg = redact(message, *secrets)
            record.args = None
        return True


_SCRUBBER = _ScrubSecrets()


def registered_secrets() -> tuple[str, ...]:
    """Every secret registered so far (:func:`register_secret`), longest first: what
    :mod:`agent_providers.storable` also keeps out of every stored text."""
    return _SCRUBBER.secrets
_INSTALLED = threading.Event()


def register_secret(*secrets: str | None) -> None:
    """Scrub these secrets from every record of :data:`SCRUBBED_LOGGERS` from now on (process-wide)."""
    if not _INSTALLED.is_set():
        for name in SCRUBBED_LOGGERS:
            logging.getLogger(name).addFilter(_SCRUBBER)
        _INSTALLED.set()
    _SCRUBBER.add(s for s in secrets if s)
