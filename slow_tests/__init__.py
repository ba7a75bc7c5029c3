"""Tests with their own Makefile targets (a browser, a wheel build): not part of `make test`."""
