"""Every ``--help`` reads as plain text: no reStructuredText markup of the docstrings leaks into it (issue 38)."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from benchmarks.cli import app

#: Markup of the code's docstrings that means nothing at a terminal.
RST = re.compile(r"``|:(?:func|mod|class|data|meth|attr):`")


def _commands(group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [path]
    if hasattr(group, "commands"):  # a group (typer vendors click: not an instance of click.Group)
        for name, sub in group.commands.items():
            out += _commands(sub, (*path, name))
    return out


COMMANDS = _commands(typer.main.get_command(app))


def test_every_command_is_listed():
    names = {" ".join(p) for p in COMMANDS}
    assert {"", "run", "leaderboard", "view", "score", "aggregate", "export", "questions list", "classroom"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "(top)")
def test_help_has_no_rst_markup(path):
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "100", "TERM": "dumb"})
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output
    found = RST.findall(res.output)
    assert not found, f"{' '.join(path)} --help shows markup {found}:\n{res.output}"
