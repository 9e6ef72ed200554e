"""The Python examples run (with the installed package) and draw their PNG."""

import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "python")


@pytest.mark.parametrize("name", ["alignment.py", "dependency_parsing.py", "tagger.py"])
def test_example_runs_and_saves_a_png(name, tmp_path):
    output = tmp_path / (name[:-3] + ".png")
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), "--output",
                             str(output)], capture_output=True, text=True, cwd=tmp_path,
                            env=dict(os.environ, MPLBACKEND="Agg"))
    assert result.returncode == 0, result.stderr
    assert "wrote %s" % output in result.stdout
    with open(output, "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"
    assert output.stat().st_size > 10000
