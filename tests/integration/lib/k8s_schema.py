#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Offline schema check of rendered Kubernetes manifests (a YAML stream on stdin).

Each object is checked against the OpenAPI models of Debian's python3-kubernetes
(the API's own schema, generated for client version 22, Kubernetes 1.22): every
field must exist in its model (a misspelt or misplaced key is an error, where
the API server would drop it silently), every value must have the model's type,
and every required field must be there. Prints one line per error and exits 1,
or prints a summary and exits 0. Usage: k8s_schema.py < rendered.yaml
"""
import sys

import yaml

try:
    import kubernetes.client as k8s
except ImportError:
    print("python3-kubernetes is not installed", file=sys.stderr)
    sys.exit(77)

KINDS = {
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("v1", "Secret"): "V1Secret",
    ("v1", "PersistentVolumeClaim"): "V1PersistentVolumeClaim",
    ("v1", "ServiceAccount"): "V1ServiceAccount",
    ("v1", "PersistentVolume"): "V1PersistentVolume",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
    ("apps/v1", "StatefulSet"): "V1StatefulSet",
    ("networking.k8s.io/v1", "NetworkPolicy"): "V1NetworkPolicy",
    ("storage.k8s.io/v1", "StorageClass"): "V1StorageClass",
    ("apps/v1", "Deployment"): "V1Deployment",
    ("batch/v1", "Job"): "V1Job",
}
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float)}
# Types that hold any JSON (IntOrString, Quantity, free-form objects).
ANY = {"object", "datetime", "date"}


def check(value, typ, path, errors):
    if typ.startswith("list["):
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            check(item, typ[5:-1], f"{path}[{i}]", errors)
        return
    if typ.startswith("dict("):
        inner = typ[typ.index(",") + 1:-1].strip()
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a map, got {type(value).__name__}")
            return
        for key, item in value.items():
            check(item, inner, f"{path}.{key}", errors)
        return
    if typ in ANY:
        return
    if typ in PRIMITIVES:
        ok = isinstance(value, PRIMITIVES[typ]) and not (typ != "bool" and isinstance(value, bool))
        if not ok:
            errors.append(f"{path}: expected {typ}, got {type(value).__name__} {value!r}")
        return
    model = getattr(k8s, typ, None)
    if model is None:
        errors.append(f"{path}: no model {typ} in python3-kubernetes")
        return
    if not isinstance(value, dict):
        errors.append(f"{path}: expected an object ({typ}), got {type(value).__name__}")
        return
    by_json = {json_name: attr for attr, json_name in model.attribute_map.items()}
    present = {}
    for key, item in value.items():
        if key not in by_json:
            errors.append(f"{path}.{key}: unknown field of {typ}")
            continue
        present[by_json[key]] = item
        check(item, model.openapi_types[by_json[key]], f"{path}.{key}", errors)
    # Required fields: the generated model refuses None for them. Present
    # fields are given a placeholder (their values were checked above).
    for attr in model.openapi_types:
        if attr in present:
            continue
        try:
            args = {a: present[a] for a in present}
            args[attr] = None
            model(**args)
        except ValueError as e:
            if "must not be `None`" in str(e) and f"`{attr}`" in str(e):
                errors.append(f"{path}.{model.attribute_map[attr]}: required by {typ}")
        except Exception:  # placeholder values that a setter rejects: not our question
            pass


def main():
    errors, kinds = [], []
    for n, doc in enumerate(yaml.safe_load_all(sys.stdin)):
        if doc is None:
            continue
        where = f"document {n} ({doc.get('kind', '?')} {doc.get('metadata', {}).get('name', '?')})"
        key = (doc.get("apiVersion"), doc.get("kind"))
        if key not in KINDS:
            errors.append(f"{where}: apiVersion/kind {key} is not one this check knows")
            continue
        check(doc, KINDS[key], where, errors)
        kinds.append(f"{doc['kind']}/{doc['metadata']['name']}")
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{len(kinds)} objects match the Kubernetes API schema: {' '.join(kinds)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
