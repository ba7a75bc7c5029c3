"""Differential harness against the real openJiuwen releases from PyPI (the oracle).

Nothing here is imported by `inspector`: the harness installs each release into its own
cached virtual environment, generates random contexts, lets the release decide them and
compares with our engine. Only `runner.py` imports openJiuwen, and only inside a release's
own environment.
"""
