"""openJiuwen's standard context processors (0.1.16, 0.1.17, 0.1.19) as strategies.

One module per processor group (compressors, round level, offloaders, compactors), the
release rules (`release`), the counters each call site uses (`counting`), the structural
helpers they share (`structure`), the started-state numbers (`event`) and the strategies
(`strategy`). Rules: `spec/standard-processors.md`. Pure: must not import anything outside
the standard library, pydantic and `inspector.core` (never openJiuwen itself).
"""
