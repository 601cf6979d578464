// The dependency graph of one version: nodes are resources coloured by deploy state, edges point from a
// resource to what requires it. Layout by dagre (cytoscape-dagre); colours refresh by polling without re-layout.
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, idParts, query, seg, type Paged, type ResourceRow } from "../api";
import { ErrorBanner, Section, kStatusColours } from "../components/Common";
import { usePoll } from "../hooks";
import { href, navigate } from "../router";

cytoscape.use(dagre);
const kMaxNodes = 5000;
const kDagreMax = 600;

async function loadVersion(env: string, version: string, signal: AbortSignal): Promise<ResourceRow[]> {
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

export function Graph({ env, version }: { env: string; version: string }) {
  const versions = usePoll(() => api.get<{ data: { version: number; status: string }[] }>("/api/v2/desiredstate?limit=100", env), [env]);
  useEffect(() => {
    if (!version && versions.data?.data.length) {
      const active = versions.data.data.find((v) => v.status === "active") ?? versions.data.data[0];
      navigate(href("graph", { env, version: active.version }), true);
    }
  }, [version, versions.data]);
  const rows = usePoll((signal) => (version ? loadVersion(env, version, signal) : Promise.resolve([])), [env, version], 4000);
  const box = useRef<HTMLDivElement>(null);
  const cy = useRef<cytoscape.Core | null>(null);
  const [layoutMs, setLayoutMs] = useState<number | null>(null);
  const [builtFor, setBuiltFor] = useState("");
  // dagre (layered) is the default up to kDagreMax nodes; above that its crossing minimisation takes seconds on a
  // slow machine, so cytoscape's own breadth-first layering is the default there (both can be picked).
  const [layout, setLayout] = useState<"auto" | "dagre" | "breadthfirst">("auto");

  // Build (and lay out) once per version; later polls only recolour.
  useEffect(() => {
    const data = rows.data;
    if (!box.current || !data) return;
    const key = `${env}/${version}/${data.length}/${layout}`;
    if (cy.current && builtFor === key) {
      cy.current.batch(() => {
        for (const r of data) cy.current!.getElementById(stripVersion(r.resource_id)).data("colour", kStatusColours[r.status] ?? "#455a64");
      });
      return;
    }
    cy.current?.destroy();
    const ids = new Set(data.map((r) => stripVersion(r.resource_id)));
    const elements: cytoscape.ElementDefinition[] = [];
    for (const r of data) {
      const id = stripVersion(r.resource_id);
      elements.push({ data: { id, label: idParts(r).resource_id_value, colour: kStatusColours[r.status] ?? "#455a64", status: r.status } });
    }
    for (const r of data)
      for (const req of r.requires ?? []) {
        const from = stripVersion(req);
        if (ids.has(from)) elements.push({ data: { id: `${from}->${stripVersion(r.resource_id)}`, source: from, target: stripVersion(r.resource_id) } });
      }
    const t0 = performance.now();
    const big = data.length > 300;
    cy.current = cytoscape({
      container: box.current,
      elements,
      wheelSensitivity: 0.3,
      textureOnViewport: big,
      hideEdgesOnViewport: big,
      style: [
        {
          selector: "node",
          style: {
            "background-color": "data(colour)",
            label: big ? "" : "data(label)",
            "font-size": 10,
            width: 14,
            height: 14,
            color: "#222",
            "text-valign": "bottom",
          },
        },
        { selector: "node:selected", style: { label: "data(label)", "border-width": 3, "border-color": "#000" } },
        { selector: "edge", style: { width: 1, "line-color": "#b0bec5", "target-arrow-shape": "triangle", "target-arrow-color": "#b0bec5", "curve-style": big ? "haystack" : "bezier" } },
      ],
      maxZoom: 1.6,
      layout: (layout === "breadthfirst" || (layout === "auto" && data.length > kDagreMax)
        ? { name: "breadthfirst", directed: true, spacingFactor: 0.6, animate: false }
        : { name: "dagre", rankDir: "LR", nodeSep: 8, rankSep: 60, ranker: big ? "longest-path" : "network-simplex", animate: false }) as any,
    });
    cy.current.on("tap", "node", (e) => navigate(href("resources/details", { env, rid: e.target.id() })));
    setLayoutMs(Math.round(performance.now() - t0));
    setBuiltFor(key);
  }, [rows.data, layout]);
  useEffect(() => () => cy.current?.destroy(), []);

  const counts: Record<string, number> = {};
  (rows.data ?? []).forEach((r) => (counts[r.status] = (counts[r.status] ?? 0) + 1));
  return (
    <Section
      title={`Dependency graph${version ? ` of version ${version}` : ""}`}
      actions={
        <>
        <select aria-label="layout" value={layout} onChange={(e) => setLayout((e.target as HTMLSelectElement).value as any)}>
          <option value="auto">layout: automatic</option>
          <option value="dagre">layout: layered (dagre)</option>
          <option value="breadthfirst">layout: breadth-first (fast)</option>
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
      <div class="legend">
        {Object.entries(counts).map(([s, n]) => (
          <span class="legend-item" key={s}>
            <i style={{ background: kStatusColours[s] ?? "#455a64" }} /> {s} {n}
          </span>
        ))}
        {rows.data && (
          <span class="muted" data-testid="graph-info" data-nodes={rows.data.length} data-layout-ms={layoutMs ?? ""} data-built={builtFor}>
            {rows.data.length} nodes{rows.data.length >= kMaxNodes ? ` (first ${kMaxNodes} only)` : ""}
            {layoutMs !== null && ` · layout ${layoutMs} ms`} · click a node for its details
          </span>
        )}
      </div>
      <div class="graph" ref={box} data-testid="graph" />
    </Section>
  );
}
