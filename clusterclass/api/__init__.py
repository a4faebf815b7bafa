"""Cluster API ``v1beta1`` object shapes: constants, references and dict-backed views.

Objects stay plain dicts everywhere (lossless for provider fields we do not know); the helpers
here only read them, so the rest of the code never spells a field path twice.
"""
