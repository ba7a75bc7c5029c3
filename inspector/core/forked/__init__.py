"""openJiuwen\x27s forked compressors as strategies (settings models and the strategy)."""
