"""Benchmarks: programs that print numbers. Nothing here asserts a time."""
