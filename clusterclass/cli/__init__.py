"""The ``clusterclass`` command line: a thin layer over ``plan`` and ``topology``."""
