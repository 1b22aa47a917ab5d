"""End-to-end benchmarks against peers, one process per implementation."""
