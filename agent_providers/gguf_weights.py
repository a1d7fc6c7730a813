"""Weight formats of the embedded model: a GGUF as shipped, or the same weights re-encoded by llama.cpp.

SmolLM2's packaged GGUF stores its weights as Q4_1 (4 bits and a per-block scale and offset). llama.cpp's
x86 CPU backend has fast matrix-matrix kernels (ggml's ``llamafile_sgemm``: F32, F16, Q8_0, Q4_0, Q5_0
and IQ4_NL weights, for batches of two or more tokens) but none for Q4_1, so prompt processing, about two thirds of the main job's model time, runs on the generic
dot-product path. ``q8_0`` re-encodes the same weights as Q8_0 (8 bits, one scale per block of 32) with
llama.cpp's own quantizer (``llama_model_quantize`` with ``allow_requantize``): each Q4_1 value is kept
within half a step of 1/127 of its block's largest magnitude, so the model is the same model in a format
the fast kernels read. Answers are not token for token the ones of the Q4_1 file (another kernel rounds
differently; greedy answers of one pipeline question: 3 of 9 identical), as with any change of kernel.

Measured on a 2-core machine (``benchmarks/perf/llama_settings.py --settings
1x1/1/512,1x1/1/512/q8_0,1x2/1/512,1x2/1/512/q8_0``: the nine calls of one pipeline question from empty
contexts, two rounds): 69.9 -> 44.4 s on one context of one thread (1.57x), 43.9 -> 23.9 s on two (1.84x).
In the main job (``benchmarks/perf/main_job_profile.py``, most of each prompt reused) the same tokens took
334 -> 283 s of model time. Prompt processing alone, one thread: 181 -> 257-277 tokens/s.

The converted file is written once into :func:`weights_cache_dir` (about 145 MB for SmolLM2-135M, 0.6 s)
and reused by every later process; its name holds a digest of the source file, so a new source gets a
new copy. Writes go to a temporary file renamed into place, so concurrent first runs never read a torn
file; the temporary file of a killed conversion is removed by a later use of the same copy.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Literal, get_args

from agent_schemas import MissingDependency

log = logging.getLogger(__name__)

#: How the embedded model's weights are stored: ``"packaged"`` is the GGUF as shipped (SmolLM2: Q4_1);
#: ``"q8_0"`` the same weights re-encoded as Q8_0 by llama.cpp (fast prompt kernels on x86).
WeightFormat = Literal["packaged", "q8_0"]
WEIGHT_FORMATS: tuple[str, ...] = get_args(WeightFormat)
#: The format of the packaged SmolLM2 unless the caller chooses (measured faster: module doc).
DEFAULT_WEIGHTS: WeightFormat = "q8_0"
#: Environment variable naming the folder of converted weights.
WEIGHTS_CACHE_ENV = "FORECAST_RECONCILE_MODEL_CACHE"


def weights_cache_dir() -> Path:
    """Folder of converted weights (absolute): ``$FORECAST_RECONCILE_MODEL_CACHE`` if set (``~`` expanded), else
    ``$XDG_CACHE_HOME/forecast-reconcile/models`` (``~/.cache/forecast-reconcile/models``)."""
    env = os.environ.get(WEIGHTS_CACHE_ENV)
    if env:
        return Path(env).expanduser().absolute()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "forecast-reconcile" / "models"


@functools.lru_cache(maxsize=16)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    """First 16 hex digits of the BLAKE2b digest of the file at ``path`` (memoised per size and mtime)."""
    h = hashlib.blake2b(digest_size=8)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def converted_path(source: Path, weights: WeightFormat, cache_dir: Path | None = None) -> Path:
    """Where the ``weights`` copy of the GGUF ``source`` lives (it may not exist yet):
    ``<cache_dir>/<source stem>.<digest of source>.<weights>.gguf``."""
    st = source.stat()
    digest = _digest(str(source), st.st_size, st.st_mtime_ns)
    return (cache_dir or weights_cache_dir()) / f"{source.stem}.{digest}.{weights}.gguf"


def weights_file(source: Path, weights: WeightFormat, cache_dir: Path | None = None) -> Path:
    """The GGUF to load for ``source`` stored as ``weights``: ``source`` itself for ``"packaged"``, else its
    converted copy, made on first use (llama.cpp's quantizer; a temporary file renamed into place).

    Parameters
    ----------
    source : Path
        A GGUF file.
    weights : {"packaged", "q8_0"}
        The format to load.
    cache_dir : Path, optional
        Folder of converted copies; default :func:`weights_cache_dir`.

    Raises
    ------
    ValueError
        If ``weights`` is not one of :data:`WEIGHT_FORMATS`.
    OSError
        If the cache folder cannot be created or written (the caller decides whether to fall back).
    RuntimeError
        If llama.cpp's quantizer fails on ``source`` (its return code is in the message).
    MissingDependency
        If ``llama-cpp-python`` is not installed.
    """
    if weights not in WEIGHT_FORMATS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_FORMATS)}, got {weights!r}")
    if weights == "packaged":
        return source
    target = converted_path(source, weights, cache_dir)
    _remove_stale_parts(target)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
    os.close(fd)
    try:
        _quantize(source, Path(tmp), weights)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    log.info("converted %s to %s weights at %s", source.name, weights, target)
    return target


#: A temporary ``.part`` file older than this (seconds) was left by a conversion that was killed (one
#: takes about a second), and the next use of the same copy removes it.
STALE_PART_S = 3600.0


def _remove_stale_parts(target: Path) -> None:
    """Remove the temporary files of killed conversions of ``target`` (older than :data:`STALE_PART_S`)."""
    now = time.time()
    for part in target.parent.glob(target.name + ".*.part"):
        with contextlib.suppress(OSError):  # another process may be removing it too
            if now - part.stat().st_mtime > STALE_PART_S:
                part.unlink()


def _quantize(source: Path, target: Path, weights: WeightFormat) -> None:
    """Write ``source`` re-encoded as ``weights`` to ``target`` with llama.cpp's quantizer (2 threads,
    its info logs off)."""
    try:
        import ctypes

        import llama_cpp
    except ImportError as exc:  # pragma: no cover - the local extra brings it
        raise MissingDependency("converting GGUF weights needs llama-cpp-python (pip install 'forecast-reconcile[local]')") from exc
    ftype = {"q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0}[weights]
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.allow_requantize = True
    params.nthread = min(2, os.cpu_count() or 1)
    logger = logging.getLogger("llama-cpp-python")  # llama-cpp-python's log callback prints at its level
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        rc = llama_cpp.llama_model_quantize(str(source).encode(), str(target).encode(), ctypes.byref(params))
    finally:
        logger.setLevel(level)
    if rc != 0:
        raise RuntimeError(f"llama.cpp could not convert {source} to {weights} (llama_model_quantize returned {rc})")
