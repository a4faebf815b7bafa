"""CustomResourceDefinitions in the embedded API server: read a CRD once, then serve its kind.

``definitions`` checks a CRD as kube-apiserver's validation does and keeps what every write of its
kind needs (:class:`~clusterclass.apiserver.crd.definitions.CrdInfo`), and loads the bundled Cluster API
CRDs (``upstream/``); ``controllers`` is what the apiextensions controllers make of a CRD (its status
conditions, accepted names, the cleanup finalizer). A version's schema is compiled by ``nodes`` into a
tree that ``schema`` walks to prune, default and validate, with ``cel`` running its
``x-kubernetes-validations`` and ``fieldtypes`` telling server-side apply its list and map types. The
schema semantics themselves come from :mod:`clusterclass.schema`.
"""
