"""Test-suite settings shared by every directory.

Property-based tests explore random examples while we develop; in CI (``CI`` set) they run a fixed,
derandomized set of examples, so a CI run is reproducible and a new counterexample is found here,
not by chance on a submission.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
