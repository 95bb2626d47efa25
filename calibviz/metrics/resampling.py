"""Placeholder: filled in by the module owner."""
__all__: list[str] = []
