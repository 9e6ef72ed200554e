"""The Python code in the documentation runs: every ```python block of
docs/python.md and README.md, in order, one namespace per page, from the top
of the repository (each block's assertions are part of the test)."""

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def python_blocks(page):
    with open(os.path.join(ROOT, page)) as text:
        return re.findall(r"^```python\n(.*?)^```$", text.read(), flags=re.S | re.M)


@pytest.mark.parametrize("page", ["docs/python.md", "README.md"])
def test_python_blocks_run(page, monkeypatch, capsys):
    blocks = python_blocks(page)
    assert blocks, "no python block in %s" % page
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "docs"}
    for number, block in enumerate(blocks, 1):
        code = compile(block, "%s, python block %d" % (page, number), "exec")
        exec(code, namespace)


def core_table(page):
    """The rows of the page's `concord._core` table, as one text."""
    with open(os.path.join(ROOT, page)) as text:
        section = text.read().split("## The low-level module: `concord._core`", 1)[1]
    return "\n".join(line for line in section.splitlines() if line.startswith("|"))


@pytest.mark.parametrize("kind", ["Graph", "Solver"])
def test_the_core_table_names_every_public_member(kind):
    """docs/python.md says `concord._core` wraps the C API one call for one:
    every public member of its Graph and Solver is in the table."""
    from concord import _core

    table = core_table("docs/python.md")
    members = [m for m in dir(getattr(_core, kind)) if not m.startswith("_")]
    missing = [m for m in members if not re.search(r"\b%s\b" % m, table)]
    assert not missing, "%s members missing from docs/python.md: %s" % (kind, missing)
