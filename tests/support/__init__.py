"""Test support shared by several test directories: the real kube-apiserver harness (``real_apiserver``), and the
check that nothing of a deleted Cluster is left (``leftovers``)."""
