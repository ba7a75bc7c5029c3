"""Strategies: one protocol (`base`), one registry (`registry`). See `base` for the flow."""
