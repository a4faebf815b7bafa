"""Bundled examples: the ClusterClasses and Clusters ``clusterclass up`` applies, and an extension in Python."""
