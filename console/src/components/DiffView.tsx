// Per-attribute diff of resources (desired-state compare and dry-run reports share the payload shape: the
// server's `from_value_compare` / `to_value_compare` strings, diffed line by line here). A file's `hash` also
// carries the server's unified diff of the two contents (`diff`), shown under the hashes as the server wrote it.
import { useState } from "preact/hooks";
import type { AttrDiff, ResourceDiff } from "../api";

type Op = { kind: " " | "-" | "+"; text: string };

// Line diff by longest common subsequence; inputs are attribute values, small enough for O(n*m).
export function lineDiff(a: string, b: string): Op[] {
  const x = a === "" ? [] : a.split("\n");
  const y = b === "" ? [] : b.split("\n");
  if (x.length * y.length > 4_000_000) {
    return [...x.map((t) => ({ kind: "-" as const, text: t })), ...y.map((t) => ({ kind: "+" as const, text: t }))];
  }
  const n = x.length, m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: Op[] = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) out.push({ kind: " ", text: x[i++] }), j++;
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ kind: "-", text: x[i++] });
    else out.push({ kind: "+", text: y[j++] });
  }
  while (i < n) out.push({ kind: "-", text: x[i++] });
  while (j < m) out.push({ kind: "+", text: y[j++] });
  return out;
}

// A unified diff's lines classed by their first character (headers and hunk lines apart).
function unifiedClass(line: string): string {
  if (line.startsWith("--- ") || line.startsWith("+++ ")) return "hdr";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("+")) return "add";
  return "same";
}

function ContentDiff({ text }: { text: string }) {
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return (
    <pre class="diff content-diff" data-testid="content-diff">
      {lines.map((l, k) => (
        <div key={k} class={unifiedClass(l)}>
          {l}
        </div>
      ))}
    </pre>
  );
}

function AttributeDiff({ name, a }: { name: string; a: AttrDiff }) {
  return (
    <div class="attr-diff" data-attr={name}>
      <div class="attr-name">{name}</div>
      <pre class="diff">
        {lineDiff(a.from_value_compare ?? "", a.to_value_compare ?? "").map((op, k) => (
          <div key={k} class={op.kind === "-" ? "del" : op.kind === "+" ? "add" : "same"}>
            {op.kind} {op.text}
          </div>
        ))}
      </pre>
      {typeof a.diff === "string" && a.diff !== "" && <ContentDiff text={a.diff} />}
    </div>
  );
}

export function DiffView({ diff, hideUnmodified = true }: { diff: ResourceDiff[]; hideUnmodified?: boolean }) {
  const [filter, setFilter] = useState("");
  const [showAll, setShowAll] = useState(!hideUnmodified);
  const counts: Record<string, number> = {};
  diff.forEach((d) => (counts[d.status] = (counts[d.status] ?? 0) + 1));
  const shown = diff.filter(
    (d) => (showAll || d.status !== "unmodified") && (!filter || d.resource_id.toLowerCase().includes(filter.toLowerCase())),
  );
  const limit = 200;
  return (
    <div class="diffview" data-testid="diff">
      <div class="toolbar">
        {Object.entries(counts).map(([s, n]) => (
          <span class={`diff-count st-${s}`} key={s}>
            {s}: {n}
          </span>
        ))}
        <input placeholder="filter by resource id" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        <label>
          <input type="checkbox" checked={showAll} onChange={(e) => setShowAll((e.target as HTMLInputElement).checked)} /> show unmodified
        </label>
      </div>
      {shown.length === 0 && <div class="muted">no differences</div>}
      {shown.slice(0, limit).map((d) => (
        <div class={`res-diff st-${d.status}`} key={d.resource_id} data-resource={d.resource_id}>
          <div class="res-diff-head">
            <span class={`diff-status st-${d.status}`}>{d.status}</span> <code>{d.resource_id}</code>
          </div>
          {Object.entries(d.attributes ?? {}).map(([name, a]) => (
            <AttributeDiff key={name} name={name} a={a} />
          ))}
        </div>
      ))}
      {shown.length > limit && <div class="muted">{shown.length - limit} more resources; narrow the filter to see them</div>}
    </div>
  );
}
