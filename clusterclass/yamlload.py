"""The YAML loader every reader of YAML uses: PyYAML's safe loader, in C when libyaml is there.

One place decides it, so plans, CRD files, kubeconfigs, apply bodies and patch templates all parse
YAML the same way (the C loader is several times faster and resolves the same tags).
"""

from __future__ import annotations

from typing import Any

import yaml

try:
    SAFE_LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    SAFE_LOADER = yaml.SafeLoader
