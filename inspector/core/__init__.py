"""Pure domain core: messages, snapshots, tuning, token counting, spans, decisions.

Nothing in this package may import Textual, Rich, httpx or do I/O.
"""
