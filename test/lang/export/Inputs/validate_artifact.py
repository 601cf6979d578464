#!/usr/bin/env python3
"""Validates export artifacts against docs/artifact.schema.json and the invariants the schema cannot state:
requires/resource-set ids exist in the document, the requires graph has no self edge, the files set is
content-addressed, and resources, keys and lists are sorted. Usage: validate_artifact.py SCHEMA ARTIFACT..."""
import base64
import hashlib
import json
import sys

import jsonschema


def check(schema, path):
    text = open(path, encoding="utf-8").read()
    doc = json.loads(text)
    jsonschema.Draft202012Validator(schema).validate(doc)
    ids = [r["id"].rsplit(",v=", 1)[0] for r in doc["resources"]]
    assert ids == sorted(ids, key=lambda s: s.encode()), "resources not sorted by id"
    assert len(set(ids)) == len(ids), "duplicate ids"
    known = set(ids)
    for r in doc["resources"]:
        keys = list(r.keys())
        assert keys == sorted(keys, key=lambda s: s.encode()), "keys not sorted in " + r["id"]
        assert r["requires"] == sorted(r["requires"], key=lambda s: s.encode())
        for dep in r["requires"]:
            assert dep in known, "dangling requires " + dep
            assert dep != r["id"].rsplit(",v=", 1)[0], "self edge " + dep
        assert r["version"] == doc["version"] and r["id"].endswith(",v=%d" % doc["version"])
    for name, members in doc["resource_sets"].items():
        for m in members:
            assert m in known, "set member not exported " + m
    for h, content in doc["files"].items():
        data = base64.b64decode(content["base64"]) if isinstance(content, dict) else content.encode("utf-8")
        assert hashlib.sha1(data).hexdigest() == h, "bad file hash " + h
    agents = sorted({r["id"].split("[", 1)[1].split(",", 1)[0] for r in doc["resources"]})
    assert doc["compile"]["resources"] == len(doc["resources"])
    print("valid: %d resources, %d files, %d sets" % (len(ids), len(doc["files"]), len(doc["resource_sets"])))


if __name__ == "__main__":
    schema = json.load(open(sys.argv[1], encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    for p in sys.argv[2:]:
        check(schema, p)
