#!/usr/bin/env bash
# Answer tests/unit/condition_merge_cases.py with upstream Cluster API v1.14's util/conditions (built here from its
# Go module) and write tests/unit/data/condition_merge_golden.json, which test_condition_merge.py holds ours to.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here" && go build -o "$work/condition-merge-golden" .)
(cd "$root/tests/unit" && "$python" -c 'import json, condition_merge_cases as c; print(json.dumps(c.CASES))') >"$work/cases.json"
"$work/condition-merge-golden" <"$work/cases.json" >"$work/answers.json"
"$python" - "$work/cases.json" "$work/answers.json" "$root/tests/unit/data/condition_merge_golden.json" <<'PY'
import json, sys
cases, answers = (json.load(open(path)) for path in sys.argv[1:3])
with open(sys.argv[3], "w") as out:
    json.dump([{"case": c, "upstream": a} for c, a in zip(cases, answers, strict=True)], out, indent=1)
    out.write("\n")
print(f"wrote {sys.argv[3]}: {len(cases)} cases")
PY
