"""Test-side infrastructure shared by tests/compat and tests/integration (not fixtures, not oracles)."""
