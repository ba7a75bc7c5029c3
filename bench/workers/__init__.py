"""Worker scripts the benchmarks time as whole processes (kept import-light on purpose)."""
