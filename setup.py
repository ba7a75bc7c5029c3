"""Packaging glue that pyproject.toml cannot say: `sample_dumps/` ships as `inspector.samples`.

`sample_dumps/` stays the one copy (what `make run` opens and `make samples` writes); the
wheel installs it as the data package `inspector.samples`, so `inspector` with no argument
opens the bundled samples after `pip install` / `pipx install`. The folder mapping and
its data files are in pyproject.toml; only the package list, which pyproject cannot extend
beyond what `packages.find` discovers, is here.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["inspector", "inspector.*"]), "inspector.samples"],
)
