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
