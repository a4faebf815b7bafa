"""Server-side apply for the embedded API server: ``metadata.managedFields`` as kube-apiserver keeps them.

``fieldtypes`` says how apply sees a kind's shape (which lists are maps or sets, which maps are
atomic); ``fieldpaths`` holds sets of field paths in the ``FieldsV1`` form; ``fieldmanager`` computes
the result of an apply or an update and the ownership it leaves, with conflicts.
"""
