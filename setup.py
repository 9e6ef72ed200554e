"""Builds the concord package: the library's C sources (src/) compiled into
a static library, linked into one Cython extension, concord._core. The
package needs nothing installed at run time but NumPy (and PyTorch for
concord.torch).

Build into a virtual environment over Debian's python3 (see README.md):
    /usr/bin/python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-build-isolation .
"""
import glob
import os
import re

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    """MAJOR.MINOR.PATCH from include/concord.h, where it is defined once."""
    with open(os.path.join(ROOT, "include", "concord.h")) as header:
        parts = dict(re.findall(r"#define CONCORD_VERSION_(MAJOR|MINOR|PATCH) (\d+)", header.read()))
    return "%s.%s.%s" % (parts["MAJOR"], parts["MINOR"], parts["PATCH"])


# Relative paths: setuptools wants them so, and they keep the build tree's
# object names short.
library_sources = sorted(glob.glob("src/*.c") + glob.glob("src/*/*.c"))

concord_library = ("concord", {
    "sources": library_sources,
    "include_dirs": ["include", "src"],
    "cflags": ["-std=c11", "-O2", "-D_POSIX_C_SOURCE=200809L", "-DCONCORD_BUILDING",
               "-fvisibility=hidden"],
})

core = Extension(
    "concord._core",
    sources=["python/concord/_core.pyx"],
    include_dirs=["include"],
    libraries=["concord", "m"],
    extra_link_args=["-pthread"],
    depends=library_sources + glob.glob("src/*.h") + glob.glob("src/*/*.h")
    + ["include/concord.h", "python/concord/_capi.pxd"],
)

setup(
    version=version(),
    libraries=[concord_library],
    ext_modules=cythonize([core], compiler_directives={"language_level": 3}),
)
