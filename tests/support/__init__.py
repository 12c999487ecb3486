"""Helpers the tests share (importable as ``support``: tests/ is on the path),
so that no test module imports another."""
