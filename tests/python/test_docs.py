"""The Python code in the documentation runs: every ```python block of
docs/python.md and README.md, in order, one namespace per page, from the
top of the repository (each block's assertions are part of the test;
test_learn.py runs docs/learning.md's). And the documented names match the
code: the `concord._core` table of docs/python.md, and the command-line
flags of README.md's table against those tools/concord.c accepts and its
--help lists."""

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


def read(path):
    with open(os.path.join(ROOT, path)) as text:
        return text.read()


FLAG = r"--?[a-z][a-z-]*"


def cli_flags():
    """The flags tools/concord.c accepts (its table of solve's flags, and
    -h, --help and --version, which main() takes) and those its --help text
    lists (the option lines of usage_text: two spaces, then the flags)."""
    source = read("tools/concord.c")
    accepted = set()
    for name, alias in re.findall(r'\{"(--[a-z-]+)", (?:NULL|"(-[a-z])"), F_[A-Z_]+, [01], [^}]+\}',
                                  source):
        accepted |= {name, alias} - {""}
    accepted |= {"-h", "--help", "--version"}
    usage = source.split("static const char usage_text[] =", 1)[1].split(";\n", 1)[0]
    helped = set()
    for line in re.findall(r'^\s*"  (-.*?)(?:  |\\n)', usage, flags=re.M):
        helped |= {f for f in re.findall(FLAG, line) if f != "-"}
    return accepted, helped


def test_cli_flags_match_help_and_readme():
    """Every flag the command-line tool accepts is in its --help and in
    README.md's flag table, and neither lists a flag it does not accept."""
    accepted, helped = cli_flags()
    assert len(accepted) >= 25
    assert helped == accepted, "--help lists %s; the parser accepts %s" % (
        sorted(helped - accepted), sorted(accepted - helped))
    section = read("README.md").split("## Command line", 1)[1].split("\n## ", 1)[0]
    documented = set()
    for row in re.findall(r"^\| (`-(?:[^|\\]|\\.)*)\|", section, flags=re.M):
        for code in re.findall(r"`([^`]*)`", row):
            documented |= set(re.findall(r"(?:^|[ ,])(" + FLAG + ")", code))
    assert documented == accepted, "README.md's table lists %s and lacks %s" % (
        sorted(documented - accepted), sorted(accepted - documented))


def test_c_api_guide_names_every_function():
    """docs/c_api.md names every function include/concord.h declares (the
    header documents each; the guide says where it fits)."""
    declared = set(re.findall(r"\b(concord_[a-z0-9_]+)\(", read("include/concord.h")))
    guide = read("docs/c_api.md")
    missing = sorted(f for f in declared if not re.search(r"\b%s\b" % f, guide))
    assert len(declared) > 80
    assert not missing, "docs/c_api.md does not name %s" % missing
