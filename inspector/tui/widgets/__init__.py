"""Widgets of the inspector, grouped by area; each posts messages named as past facts."""
