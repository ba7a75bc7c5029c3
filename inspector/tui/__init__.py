"""The Textual front end: `create_app` builds the app used by the CLI launcher and the tests."""

from __future__ import annotations
