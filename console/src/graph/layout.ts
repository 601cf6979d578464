// The layered layout of the dependency graph (ours, no library): longest-path layering from the resources nothing
// requires, one horizontal band per agent, barycentric ordering inside each band's layers, and columns as wide as
// their widest label. Invariant (checked by the console e2e test from the rendered boxes): node + label boxes never
// overlap — every node sits on its own row of its band's column, rows are `rowHeight` apart (more than a label is
// high), and a column ends `colGap` after its widest label. Linear in nodes + edges apart from the sorts, so 10,000
// nodes lay out in tens of milliseconds.

export interface LayoutNode {
  id: string;
  label: string; // already shortened by the caller
  group: string; // the agent: one band per group
}
export interface LayoutEdge {
  from: string; // the requirement
  to: string; // the resource that requires it
}
export interface LayoutOptions {
  measure: (text: string) => number; // label width in px
  nodeSize: number;
  labelGap: number; // between the node and its label
  colGap: number; // after the widest label of a column
  rowHeight: number;
  bandHeader: number; // room for the agent's name above its band
  bandGap: number;
  maxRows?: number; // a band's column taller than this wraps into side-by-side sub-columns (default: by area)
  sweeps?: number; // barycentric down+up sweeps (default 4)
}
export interface Placed {
  x: number; // node centre
  y: number;
  layer: number;
  row: number;
}
export interface Band {
  group: string;
  top: number;
  height: number;
  count: number;
}
export interface Layout {
  pos: Map<string, Placed>;
  bands: Band[];
  width: number;
  height: number;
  layers: number;
}

// Longest path from the sources: a node's layer is one more than the deepest of its requirements. Requirement
// cycles (which the server refuses, but a console must not hang on) are broken by placing the rest in input order.
export function layering(nodes: LayoutNode[], edges: LayoutEdge[]): Map<string, number> {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const indeg = new Int32Array(nodes.length);
  const out: number[][] = nodes.map(() => []);
  for (const e of edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    out[a].push(b);
    indeg[b]++;
  }
  const layer = new Int32Array(nodes.length);
  const done = new Uint8Array(nodes.length);
  const queue: number[] = [];
  for (let i = 0; i < nodes.length; i++) if (indeg[i] === 0) queue.push(i);
  let head = 0;
  let next = 0; // cycle breaking: the first unplaced node in input order
  for (;;) {
    while (head < queue.length) {
      const v = queue[head++];
      done[v] = 1;
      for (const w of out[v]) {
        if (done[w]) continue;
        if (layer[w] < layer[v] + 1) layer[w] = layer[v] + 1;
        if (--indeg[w] === 0) queue.push(w);
      }
    }
    while (next < nodes.length && done[next]) next++;
    if (next >= nodes.length) break;
    indeg[next] = 0;
    queue.push(next);
  }
  return new Map(nodes.map((n, i) => [n.id, layer[i]]));
}

export function layout(nodes: LayoutNode[], edges: LayoutEdge[], o: LayoutOptions): Layout {
  const layerOf = layering(nodes, edges);
  let nLayers = 0;
  for (const l of layerOf.values()) nLayers = Math.max(nLayers, l + 1);
  const groupOf = new Map(nodes.map((n) => [n.id, n.group]));
  // Neighbours inside the same band, for the ordering (edges between bands do not order rows).
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const e of edges) {
    if (!groupOf.has(e.from) || !groupOf.has(e.to) || groupOf.get(e.from) !== groupOf.get(e.to)) continue;
    (preds.get(e.to) ?? preds.set(e.to, []).get(e.to)!).push(e.from);
    (succs.get(e.from) ?? succs.set(e.from, []).get(e.from)!).push(e.to);
  }
  const groups = [...new Set(nodes.map((n) => n.group))].sort();
  // cells[g][layer] = the node ids of that band's column, in row order
  const cells = new Map<string, string[][]>();
  for (const g of groups) cells.set(g, Array.from({ length: nLayers }, () => []));
  for (const n of nodes) cells.get(n.group)![layerOf.get(n.id)!].push(n.id);

  const rowOf = new Map<string, number>();
  const sweeps = o.sweeps ?? 4;
  for (const g of groups) {
    const cols = cells.get(g)!;
    cols.forEach((c) => c.forEach((id, i) => rowOf.set(id, i)));
    const order = (col: string[], nb: Map<string, string[]>) => {
      const key = new Map<string, number>();
      for (const id of col) {
        const ns = nb.get(id);
        key.set(id, ns && ns.length ? ns.reduce((s, x) => s + rowOf.get(x)!, 0) / ns.length : rowOf.get(id)!);
      }
      col.sort((a, b) => key.get(a)! - key.get(b)! || rowOf.get(a)! - rowOf.get(b)!);
      col.forEach((id, i) => rowOf.set(id, i));
    };
    for (let s = 0; s < sweeps; s++) {
      for (let l = 1; l < cols.length; l++) order(cols[l], preds);
      for (let l = cols.length - 2; l >= 0; l--) order(cols[l], succs);
    }
  }

  // Rows per sub-column: a tall column wraps so the drawing comes out about twice as wide as high (a column of
  // 500 rows is unreadable at any zoom that shows it whole). Wrapping stays inside the layer's x range, so a
  // requirement is still left of what requires it.
  let sumWidth = 0;
  for (const n of nodes) sumWidth += o.nodeSize + o.labelGap + o.measure(n.label) + o.colGap;
  const estWidth = (1.3 * sumWidth) / Math.max(1, nodes.length); // a column is as wide as its widest label
  const auto = Math.round(Math.sqrt((nodes.length * estWidth * o.rowHeight) / 2) / o.rowHeight / Math.max(1, groups.length));
  const R = Math.max(1, o.maxRows ?? Math.max(8, auto));
  const subCols = new Int32Array(nLayers).fill(1);
  for (const g of groups) cells.get(g)!.forEach((c, l) => (subCols[l] = Math.max(subCols[l], Math.ceil(c.length / R))));

  // Columns: as wide as the node plus its widest label, times the layer's sub-columns.
  const colWidth = new Float64Array(nLayers);
  for (const n of nodes) {
    const l = layerOf.get(n.id)!;
    colWidth[l] = Math.max(colWidth[l], o.nodeSize + o.labelGap + o.measure(n.label) + o.colGap);
  }
  const colX = new Float64Array(nLayers);
  for (let l = 1; l < nLayers; l++) colX[l] = colX[l - 1] + colWidth[l - 1] * subCols[l - 1];
  const width = nLayers ? colX[nLayers - 1] + colWidth[nLayers - 1] * subCols[nLayers - 1] : 0;

  const pos = new Map<string, Placed>();
  const bands: Band[] = [];
  let top = 0;
  for (const g of groups) {
    const cols = cells.get(g)!;
    const rows = Math.min(R, Math.max(0, ...cols.map((c) => c.length)));
    const height = o.bandHeader + rows * o.rowHeight;
    cols.forEach((col, l) =>
      col.forEach((id, i) => {
        const r = i % R;
        const x = colX[l] + Math.floor(i / R) * colWidth[l] + o.nodeSize / 2;
        pos.set(id, { x, y: top + o.bandHeader + r * o.rowHeight + o.rowHeight / 2, layer: l, row: r });
      }),
    );
    bands.push({ group: g, top, height, count: cols.reduce((s, c) => s + c.length, 0) });
    top += height + o.bandGap;
  }
  return { pos, bands, width, height: Math.max(0, top - o.bandGap), layers: nLayers };
}
