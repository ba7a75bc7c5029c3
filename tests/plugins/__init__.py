"""Strategies that exist only for the tests (registered by monkeypatching the registry)."""
