"""Files only their owner may read: keys, kubeconfigs, state that holds Secrets.

One way to write them, so no such file ever exists with the umask's mode, not even for a moment: the data goes to a
temporary file created 0600 beside the target, which then replaces the target (a reader sees the old file or the
new one, never half of one).
"""

from __future__ import annotations

import os
from pathlib import Path

OWNER_ONLY = 0o600


def write_private(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` with mode 0600 (its directory made if missing); the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.tmp")
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, OWNER_ONLY), "wb") as handle:
        handle.write(data)
    os.chmod(temporary, OWNER_ONLY)  # an earlier temporary left with another mode
    os.replace(temporary, target)
    return target
