"""Test support shared by several test directories: the real kube-apiserver harness (``real_apiserver``)."""
