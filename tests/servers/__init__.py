"""Small real HTTP servers that tests start on 127.0.0.1 (importable by any test module)."""
