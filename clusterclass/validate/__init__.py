"""``clusterclass validate``: the admission rules, offline, over YAML files."""
