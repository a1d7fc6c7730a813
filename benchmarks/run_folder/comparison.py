"""Where a comparison of runs (``forecast-reconcile leaderboard``) writes its files: never into a run folder.

A run folder's files are written by that run (``run``, ``aggregate``, their ``--resume``) and by ``view RUN``, which
rebuilds the run's own page; nothing else writes there. A comparison reads runs and writes its own folder:
``comparisons/<n>-runs-<digest>/`` by default (:func:`comparison_folder`), the digest (10 hexadecimal characters of
``blake2b``) of the compared folders' absolute paths in the order given, so comparing the same runs again replaces
that comparison's files, and comparing other runs never touches them. An ``--output`` that is a run folder (it
holds a ``manifest.json``), one of the folders read, or a folder inside one is refused (:func:`check_output`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from benchmarks.run_folder.layout import MANIFEST_FILE

__all__ = ["COMPARISONS_DIR", "check_output", "comparison_folder"]

#: Parent folder of the comparisons ``leaderboard`` writes by default (relative to the working directory).
COMPARISONS_DIR = Path("comparisons")


def comparison_folder(folders: Sequence[str | Path], parent: str | Path = COMPARISONS_DIR) -> Path:
    """The default folder of a comparison of the run folders ``folders``: ``<parent>/<n>-runs-<digest>``.

    ``n`` is the number of folders given (the shards of one run count one each); the digest is of their absolute
    paths in order, so the same folders in the same order always give the same name.

    >>> comparison_folder(["/r/a", "/r/b"]).name.startswith("2-runs-")
    True
    >>> comparison_folder(["/r/a", "/r/b"]) == comparison_folder(["/r/a", "/r/b"]) != comparison_folder(["/r/b", "/r/a"])
    True
    """
    text = "\n".join(str(Path(f).absolute()) for f in folders)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=5).hexdigest()
    count = len(folders)
    return Path(parent) / f"{count}-run{'s' if count != 1 else ''}-{digest}"


def check_output(out: str | Path, read: Iterable[str | Path], *, option: str = "--output") -> Path:
    """``out`` if a comparison may write there: not a run folder, not a folder read (``read``), not inside one.

    Raises
    ------
    ValueError
        One line naming ``option`` and the folder: ``out`` holds a ``manifest.json`` (a run's own folder), is one
        of ``read`` or lies inside one; or it is a file.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{option} {out} is a file, not a folder")
    if (out / MANIFEST_FILE).is_file():
        raise ValueError(f"{option} {out} is a run folder: a comparison never writes into a run's own files "
                         "(give a new folder, or leave out --output for comparisons/...)")
    where = out.resolve()
    for folder in read:
        folder = Path(folder).resolve()
        if where == folder or folder in where.parents:
            raise ValueError(f"{option} {out} is inside the run folder {folder}, which the comparison reads: give another folder")
    return out
