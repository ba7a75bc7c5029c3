"""`python runsrc.py SRC ARGS...`: `python -m inspector ARGS` from the source tree SRC (the
editable install's finder is set aside, so another checkout's code runs). Writes nothing."""

from __future__ import annotations

import runpy
import sys

source = sys.argv[1]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, source)
sys.argv = ["inspector", *sys.argv[2:]]
runpy.run_module("inspector", run_name="__main__", alter_sys=True)
