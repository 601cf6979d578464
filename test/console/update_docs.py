#!/usr/bin/env python3
"""Rewrites the "Measurements" and "Screenshots" sections of docs/console.md from the e2e runs' last-run.json and
PNG files: docs/console/ (`run_e2e.py --shots docs/console`, the real server) and, for pages whose backend was not
on the server yet, docs/console/fake/ (`run_e2e.py --fake --shots docs/console/fake`), labelled as such."""
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "console.md")
SHOTS = os.path.join(ROOT, "docs", "console")

CAPTIONS = [
    ("landing", "Landing page: projects, environments, create form"),
    ("dashboard", "Environment dashboard: deploy progress, last versions (trigger, commit), last compile, agents, failures"),
    ("settings", "Settings with types and defaults"),
    ("desiredstate", "Desired-state versions after promoting version 1"),
    ("desiredstate-commit", "Versions with trigger and commit (version 3 compiled from the environment's repository)"),
    ("error-message", "A refused request shows the server's message"),
    ("diff", "Compare version 1 → 2, per-attribute diff"),
    ("resources", "Resources: summary bar, filters, live state"),
    ("resource-details", "Resource details (the failed one)"),
    ("resource-logs", "Its log with structured kwargs (traceback)"),
    ("graph", "Dependency graph coloured by state"),
    ("dryrun", "Dry run: progress and diff"),
    ("compilereports", "Compile reports: state badge links to the report, commit and trigger columns"),
    ("agents", "Agents, lab2 paused: mode, URI, holder"),
    ("graph-1000", "1,000-node graph: one band per agent, layered left to right"),
    ("graph-1000-focus", "1,000-node graph: search and focus on a resource and its neighbourhood"),
    ("scale-100-dashboard", "100 resources: dashboard"),
    ("scale-100-resources", "100 resources: resources"),
    ("scale-100-desiredstate", "100 resources: desired state"),
    ("scale-100-graph", "100 resources: graph"),
    ("scale-100-graph-focus", "100 resources: graph, focused"),
    ("scale-100-agents", "100 resources: agents"),
    ("scale-100-compilereports", "100 resources: compile reports"),
    ("scale-100-settings", "100 resources: settings"),
    ("scale-10k-dashboard", "10,000 resources: dashboard"),
    ("scale-10k-resources", "10,000 resources: resources"),
    ("scale-10k-desiredstate", "10,000 resources: desired state"),
    ("scale-10k-graph", "10,000 resources: graph"),
    ("scale-10k-graph-focus", "10,000 resources: graph, focused"),
    ("scale-10k-agents", "10,000 resources: agents"),
    ("scale-10k-compilereports", "10,000 resources: compile reports"),
    ("scale-10k-settings", "10,000 resources: settings"),
    ("resources-100k", "100,000-resource environment"),
    ("login", "Login form after a refused token"),
]

METRICS = [
    ("first_render_ms", "100k environment: navigation → first table row drawn"),
    ("filtered_page_ms", "100k environment: value filter entered → filtered page drawn"),
    ("api_first_page_ms", "the same first page's API request alone (no browser)"),
    ("api_filtered_page_ms", "the same filtered page's API request alone (no browser)"),
    ("page_1000_rows_ms", "100k environment: a 1,000-row page (sorted by agent) → drawn"),
    ("rows_in_dom_of_1000", "rows in the DOM for that 1,000-row page (virtualised)"),
    ("put_version_ms", "test set-up: reserve + `PUT /api/v1/version` of the 100k version (gzip)"),
    ("graph_1000_layout_ms", "1,000-node graph: layout (graph/layout.ts)"),
    ("graph_1000_layout_and_draw_ms", "1,000-node graph: layout + first canvas frame"),
    ("graph_1000_total_ms", "1,000-node graph: navigation → drawn"),
    ("graph_10k_layout_ms", "10,000-node graph: layout"),
    ("graph_10k_layout_and_draw_ms", "10,000-node graph: layout + first canvas frame"),
    ("graph_10k_total_ms", "10,000-node graph: navigation (10 API pages) → drawn"),
]


def summary(run, title):
    res = run["results"]
    n = {s: sum(1 for r in res if r["status"] == s) for s in ("passed", "failed", "skipped")}
    lines = [f"{title}: **{run['backend']}** — {n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped.", ""]
    for r in res:
        if r["status"] == "skipped":
            lines.append(f"- skipped: {r['name']} — {r['why']}")
    if any(k in run.get("metrics", {}) for k, _ in METRICS):
        lines += ["", "| measurement (headless Chromium, 2-core VM shared with other builds) | value |", "|---|---|"]
        for key, label in METRICS:
            if key in run.get("metrics", {}):
                v = run["metrics"][key]
                lines.append(f"| {label} | {v}{' ms' if key.endswith('_ms') else ''} |")
    return lines + [""]


def main():
    fake_dir = os.path.join(SHOTS, "fake")
    runs = []
    if os.path.exists(os.path.join(SHOTS, "last-run.json")):
        runs.append(("Run", json.load(open(os.path.join(SHOTS, "last-run.json"))), SHOTS, "console"))
    if os.path.exists(os.path.join(fake_dir, "last-run.json")):
        runs.append(("Fake-API run (pages the server could not serve yet)", json.load(open(os.path.join(fake_dir, "last-run.json"))), fake_dir, "console/fake"))
    lines = ["How to read these: the browser's share of a 100k page is what the fake-API run shows (its API answers in",
             "memory); the real-server figures add the server's own answer time, which the `API request alone` rows",
             "measure without a browser (the page keeps polling while those run, so they overlap with it). Every",
             "figure is one run on a 2-core VM shared with other builds: expect ±50 %.", ""]
    for title, run, _, _ in runs:
        lines += summary(run, title)
    shots = []
    for name, caption in CAPTIONS:
        for title, run, d, rel in runs:
            if os.path.exists(os.path.join(d, f"{name}.png")):
                label = caption + ("" if rel == "console" else " — fake API")
                shots += [f"**{label}**", "", f"![{label}]({rel}/{name}.png)", ""]
                break
    doc = open(DOC).read()
    doc = re.sub(r"(## Measurements\n\n).*?(\n## Screenshots)", lambda m: m.group(1) + "\n".join(lines) + m.group(2), doc, flags=re.S)
    doc = re.sub(r"(## Screenshots \(taken by the e2e run\)\n\n).*", lambda m: m.group(1) + "\n".join(shots), doc, flags=re.S)
    open(DOC, "w").write(doc)


if __name__ == "__main__":
    main()
