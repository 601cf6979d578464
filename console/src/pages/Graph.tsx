// The dependency graph of one version: our layered layout (graph/layout.ts: one band per agent, columns by
// requirement depth, labels never overlapping) drawn on one canvas by graph/GraphView.ts; nodes coloured by deploy
// state and recoloured by polling without a new layout; search and focus on a resource and its neighbourhood
// (`focus=` in the address, so a focused view is a link). Labels appear from a readable zoom on.
// window.__inmGraph exposes the drawn graph to the e2e test (node + label boxes as GraphView draws them).
import { useEffect, useRef, useState } from "preact/hooks";
import { api, idParts, query, seg, type Paged, type ResourceRow } from "../api";
import { ErrorBanner, Section, kStatusColours } from "../components/Common";
import { usePoll } from "../hooks";
import { href, navigate } from "../router";
import { layout, type Placed } from "../graph/layout";
import { GraphView, kGraphFont, kGraphFontSize } from "../graph/GraphView";

const kMaxNodes = 20000;
const kMaxLabel = 36;

async function fetchVersion(env: string, version: string, signal: AbortSignal): Promise<ResourceRow[]> {
  const rows: ResourceRow[] = [];
  let url: string | undefined = `/api/v2/desiredstate/${seg(version)}${query({ limit: 1000 })}`;
  while (url && rows.length < kMaxNodes) {
    const page: Paged<ResourceRow> = await api.get<Paged<ResourceRow>>(url, env, signal);
    rows.push(...page.data);
    url = page.data.length ? page.links?.next : undefined;
  }
  return rows.length > kMaxNodes ? rows.slice(0, kMaxNodes) : rows;
}

const stripVersion = (id: string) => id.replace(/,v=\d+$/, "");
const shorten = (s: string) => (s.length > kMaxLabel ? `${s.slice(0, kMaxLabel - 1)}…` : s);

let measureCtx: CanvasRenderingContext2D | null = null;
function measure(text: string): number {
  if (!measureCtx) {
    measureCtx = document.createElement("canvas").getContext("2d")!;
    measureCtx.font = `${kGraphFontSize}px ${kGraphFont}`;
  }
  return Math.ceil(measureCtx.measureText(text).width) + 2;
}

declare global {
  interface Window {
    __inmGraph?: {
      view: GraphView;
      layoutMs: number;
      drawMs: number;
      nodes: number;
      bands: number;
      edges: [string, string][];
      pos: Map<string, Placed>;
    };
  }
}

export function Graph({ env, version, focus }: { env: string; version: string; focus: string }) {
  const versions = usePoll(() => api.get<{ data: { version: number; status: string }[] }>("/api/v2/desiredstate?limit=100", env), [env]);
  useEffect(() => {
    if (!version && versions.data?.data.length) {
      const active = versions.data.data.find((v) => v.status === "active") ?? versions.data.data[0];
      navigate(href("graph", { env, version: active.version }), true);
    }
  }, [version, versions.data]);
  // Big versions are re-read (for their colours) every 15 s instead of every 4 s.
  const last = useRef<{ key: string; at: number; rows: ResourceRow[] } | null>(null);
  const rows = usePoll(
    async (signal) => {
      if (!version) return [];
      const key = `${env}/${version}`;
      const l = last.current;
      if (l && l.key === key && l.rows.length > 2000 && Date.now() - l.at < 15000) return l.rows;
      const r = await fetchVersion(env, version, signal);
      last.current = { key, at: Date.now(), rows: r };
      return r;
    },
    [env, version],
    4000,
  );
  const box = useRef<HTMLDivElement>(null);
  const view = useRef<GraphView | null>(null);
  const [layoutMs, setLayoutMs] = useState<number | null>(null);
  const [builtFor, setBuiltFor] = useState("");
  const [layoutOnlyMs, setLayoutOnlyMs] = useState<number | null>(null);
  const [search, setSearch] = useState(focus);
  const [depth, setDepth] = useState(1);
  const [matches, setMatches] = useState<string[] | null>(null);

  // Build (and lay out) once per version; later polls only recolour.
  useEffect(() => {
    const data = rows.data;
    if (!box.current || !data) return;
    const key = `${env}/${version}/${data.length}`;
    if (view.current && builtFor === key) {
      const colour = new Map(data.map((r) => [stripVersion(r.resource_id), kStatusColours[r.status] ?? "#455a64"]));
      view.current.setColours((id) => colour.get(id));
      return;
    }
    view.current?.destroy();
    view.current = null;
    const t0 = performance.now();
    const ids = new Set(data.map((r) => stripVersion(r.resource_id)));
    const nodes = data.map((r) => {
      const p = idParts(r);
      return { id: stripVersion(r.resource_id), label: shorten(p.resource_id_value), group: p.agent, status: r.status, type: p.resource_type };
    });
    const edges: { from: string; to: string }[] = [];
    for (const r of data)
      for (const req of r.requires ?? []) {
        const from = stripVersion(req);
        if (ids.has(from)) edges.push({ from, to: stripVersion(r.resource_id) });
      }
    const lay = layout(nodes, edges, { measure, nodeSize: 10, labelGap: 4, colGap: 28, rowHeight: 18, bandHeader: 26, bandGap: 14 });
    const layoutOnly = Math.round(performance.now() - t0);
    const index = new Map(nodes.map((n, i) => [n.id, i]));
    view.current = new GraphView(
      box.current,
      nodes.map((n) => ({ id: n.id, label: n.label, x: lay.pos.get(n.id)!.x, y: lay.pos.get(n.id)!.y, colour: kStatusColours[n.status] ?? "#455a64" })),
      edges.map((e) => [index.get(e.from)!, index.get(e.to)!]),
      lay.bands.map((b) => ({ label: `agent ${b.group} · ${b.count} resources`, top: b.top, height: b.height })),
      (id) => navigate(href("graph", { env, version, focus: id }), true),
    );
    // Drawn once the browser has painted the first frame.
    requestAnimationFrame(() => {
      const ms = Math.round(performance.now() - t0);
      window.__inmGraph = { view: view.current!, layoutMs: layoutOnly, drawMs: ms - layoutOnly, nodes: nodes.length, bands: lay.bands.length, edges: edges.map((e) => [e.from, e.to]), pos: lay.pos };
      setLayoutMs(ms);
      setLayoutOnlyMs(layoutOnly);
      setBuiltFor(key);
    });
  }, [rows.data]);
  useEffect(() => () => view.current?.destroy(), []);

  // Focus: the resource, its requirements and dependents up to `depth` steps; the rest is faded.
  useEffect(() => {
    if (view.current && builtFor) view.current.focus(focus || null, depth);
  }, [focus, depth, builtFor]);

  const find = (text: string) => {
    const t = text.trim().toLowerCase();
    if (!rows.data || !t) {
      setMatches(null);
      navigate(href("graph", { env, version }), true);
      return;
    }
    const found = rows.data.map((r) => stripVersion(r.resource_id)).filter((id) => id.toLowerCase().includes(t));
    setMatches(found.slice(0, 50));
    if (found.length) navigate(href("graph", { env, version, focus: found.find((f) => f.toLowerCase() === t) ?? found[0] }), true);
  };

  const counts: Record<string, number> = {};
  (rows.data ?? []).forEach((r) => (counts[r.status] = (counts[r.status] ?? 0) + 1));
  const focused = focus ? rows.data?.find((r) => stripVersion(r.resource_id) === focus) : undefined;
  return (
    <Section
      title={`Dependency graph${version ? ` of version ${version}` : ""}`}
      actions={
        <>
          <form
            class="graph-search"
            onSubmit={(e) => {
              e.preventDefault();
              find(search);
            }}
          >
            <input name="search" placeholder="find a resource (id or part of it)" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
            <button type="submit">Find</button>
          </form>
          <select aria-label="depth" value={depth} onChange={(e) => setDepth(Number((e.target as HTMLSelectElement).value))}>
            {[1, 2, 3].map((d) => (
              <option key={d} value={d}>
                neighbourhood: {d} step{d > 1 ? "s" : ""}
              </option>
            ))}
          </select>
          <select aria-label="version" value={version} onChange={(e) => navigate(href("graph", { env, version: (e.target as HTMLSelectElement).value }))}>
            {!version && <option value="">pick a version…</option>}
            {versions.data?.data.map((v) => (
              <option key={v.version} value={v.version}>
                {v.version} ({v.status})
              </option>
            ))}
          </select>
        </>
      }
    >
      <ErrorBanner error={versions.error ?? rows.error} />
      {matches && matches.length === 0 && <div class="muted">no resource matches “{search}”</div>}
      {matches && matches.length > 1 && (
        <div key="matches" class="small matches">
          {matches.length >= 50 ? "first 50 of many" : matches.length} matches:{" "}
          {matches.map((m) => (
            <a key={m} href={href("graph", { env, version, focus: m })} class={m === focus ? "active" : ""}>
              {m}
            </a>
          ))}
        </div>
      )}
      <div key="legend" class="legend">
        {Object.entries(counts).map(([s, n]) => (
          <span class="legend-item" key={s}>
            <i style={{ background: kStatusColours[s] ?? "#455a64" }} /> {s} {n}
          </span>
        ))}
        {rows.data && (
          <span class="muted" data-testid="graph-info" data-nodes={rows.data.length} data-layout-ms={layoutMs ?? ""} data-layout-only-ms={layoutOnlyMs ?? ""} data-built={builtFor}>
            {rows.data.length} nodes{rows.data.length >= kMaxNodes ? ` (first ${kMaxNodes} only)` : ""}
            {layoutMs !== null && ` · layout ${layoutOnlyMs} ms + draw ${(layoutMs ?? 0) - (layoutOnlyMs ?? 0)} ms`} · one band per agent, requirements left of what requires them · click a
            node to focus it
          </span>
        )}
      </div>
      {focus && (
        <div key="focus" class="focus-bar" data-testid="graph-focus" data-focus={focus}>
          focused: <b>{focus}</b> {focused && <span class="badge" style={{ background: kStatusColours[focused.status] ?? "#455a64" }}>{focused.status}</span>}{" "}
          <a href={href("resources/details", { env, rid: focus })}>details</a>{" "}
          <button class="link" onClick={() => navigate(href("graph", { env, version }), true)}>
            clear focus
          </button>
        </div>
      )}
      <div key="graph" class="graph" ref={box} data-testid="graph" />
    </Section>
  );
}
