"""Example forms."""
