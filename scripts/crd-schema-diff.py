#!/usr/bin/env python3
"""Print the field paths only one API version of a CRD has (v1beta1 vs v1beta2), and paths whose type differs:
the worklist a conversion must account for. Usage: scripts/crd-schema-diff.py config/crd/bases/<file>.yaml..."""
import yaml, sys, glob, os
def paths(schema, prefix=""):
    out = {}
    t = schema.get("type")
    if "properties" in schema:
        for k, v in schema["properties"].items():
            p = f"{prefix}.{k}" if prefix else k
            out[p] = v.get("type")
            out.update(paths(v, p))
    if t == "array" and "items" in schema:
        out.update(paths(schema["items"], prefix + "[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        out.update(paths(schema["additionalProperties"], prefix + "{}"))
    return out
for f in sys.argv[1:]:
    d = yaml.safe_load(open(f))
    vs = {v["name"]: paths(v["schema"]["openAPIV3Schema"]) for v in d["spec"]["versions"]}
    print("=====", d["spec"]["names"]["kind"])
    if "v1beta1" not in vs or "v1beta2" not in vs: 
        print(list(vs)); continue
    a, b = vs["v1beta1"], vs["v1beta2"]
    for p in sorted(set(a) - set(b)):
        if p.startswith("metadata"): continue
        print("  -", p, a[p])
    for p in sorted(set(b) - set(a)):
        if p.startswith("metadata"): continue
        print("  +", p, b[p])
    for p in sorted(set(a) & set(b)):
        if a[p] != b[p]: print("  ~", p, a[p], "->", b[p])
