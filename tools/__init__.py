"""Developer tools that write files for the repository (not part of the installed package).

`tools.samples` regenerates `sample_dumps/`. Nothing under `inspector/` imports this package.
"""
