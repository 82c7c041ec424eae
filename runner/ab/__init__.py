"""The A/B harness: the battery against the naive "run pytest, read the exit code" on real bugs (docs/ab.md)."""
