"""Context Inspector: see, explain and tune LLM context compaction."""

__version__ = "0.1.0"
