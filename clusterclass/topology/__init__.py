"""The pure topology pipeline: blueprint → current state → desired state → changes.

Nothing in this package performs I/O on its own: objects come in through the :class:`Reader` and
:class:`NodeReader` protocols, randomness through a ``random.Random`` argument. ``plan``,
validation, the webhooks and the controller all call these same functions.
"""
