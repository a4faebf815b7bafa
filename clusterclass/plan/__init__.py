"""Offline planning: what a topology would create, change or delete, from YAML files alone."""
