"""Structural schemas as Kubernetes defines them, for every user of an ``openAPIV3Schema``.

Two parts of clusterclass validate JSON values against Kubernetes schemas: ClusterClass variables
(``clusterclass.topology.variables``) and the embedded API server's CRDs
(``clusterclass.apiserver.crd``). Both must give kube-apiserver's answers — the same defaults, the
same pruned fields, the same messages and field paths — so the schema semantics live once, here,
below both. This package depends only on ``clusterclass.api`` and ``clusterclass.fielderrors``.

Module map, in the order apiextensions runs them:

- ``model``: a schema parsed once into :class:`~clusterclass.schema.model.Schema` nodes, with the
  structural-schema rules;
- ``defaulting``: defaults, and the pruning of unknown fields (a default is pruned before it applies);
- ``validation``: the OpenAPI checks with Kubernetes' messages; ``formats`` the string formats;
  ``patterns`` RE2 ``pattern`` matching; ``jsonvalues`` JSON type names, integers and equality;
- ``cel``, ``celast``, ``celcost``, ``celrules``: ``x-kubernetes-validations`` (compile, estimate
  cost, evaluate with the Kubernetes CEL libraries).
"""
