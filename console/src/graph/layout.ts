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
// `out[i]` lists the indices of the nodes that require node i.
export function layering(n: number, out: number[][]): Int32Array {
  const indeg = new Int32Array(n);
  for (const ws of out) for (const w of ws) indeg[w]++;
  const layer = new Int32Array(n);
  const done = new Uint8Array(n);
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) queue.push(i);
  let head = 0;
  let next = 0; // cycle breaking: the first unplaced node in input order
  for (;;) {
    while (head < queue.length) {
      const v = queue[head++];
      if (done[v]) continue;
      done[v] = 1;
      for (const w of out[v]) {
        if (done[w]) continue;
        if (layer[w] < layer[v] + 1) layer[w] = layer[v] + 1;
        if (--indeg[w] === 0) queue.push(w);
      }
    }
    while (next < n && done[next]) next++;
    if (next >= n) break;
    queue.push(next);
  }
  return layer;
}

export function layout(nodes: LayoutNode[], edges: LayoutEdge[], o: LayoutOptions): Layout {
  const N = nodes.length;
  const index = new Map<string, number>();
  nodes.forEach((n, i) => index.set(n.id, i));
  const groups = [...new Set(nodes.map((n) => n.group))].sort();
  const gIndex = new Map(groups.map((g, i) => [g, i]));
  const groupOf = Int32Array.from(nodes, (n) => gIndex.get(n.group)!);
  const out: number[][] = Array.from({ length: N }, () => []);
  // Neighbours inside the same band, for the ordering (edges between bands do not order rows).
  const preds: number[][] = Array.from({ length: N }, () => []);
  const succs: number[][] = Array.from({ length: N }, () => []);
  for (const e of edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    out[a].push(b);
    if (groupOf[a] === groupOf[b]) {
      preds[b].push(a);
      succs[a].push(b);
    }
  }
  const layer = layering(N, out);
  let nLayers = 0;
  for (let i = 0; i < N; i++) nLayers = Math.max(nLayers, layer[i] + 1);
  // cells[g][l] = the node indices of band g's column l, in row order
  const cells: number[][][] = groups.map(() => Array.from({ length: nLayers }, () => []));
  for (let i = 0; i < N; i++) cells[groupOf[i]][layer[i]].push(i);

  const rowOf = new Float64Array(N);
  const key = new Float64Array(N);
  const sweeps = o.sweeps ?? 4;
  const order = (col: number[], nb: number[][]) => {
    for (const v of col) {
      const ns = nb[v];
      if (!ns.length) key[v] = rowOf[v];
      else {
        let sum = 0;
        for (const x of ns) sum += rowOf[x];
        key[v] = sum / ns.length;
      }
    }
    col.sort((a, b) => key[a] - key[b] || rowOf[a] - rowOf[b]);
    col.forEach((v, i) => (rowOf[v] = i));
  };
  for (const cols of cells) {
    cols.forEach((c) => c.forEach((v, i) => (rowOf[v] = i)));
    for (let s = 0; s < sweeps; s++) {
      for (let l = 1; l < cols.length; l++) order(cols[l], preds);
      for (let l = cols.length - 2; l >= 0; l--) order(cols[l], succs);
    }
  }

  // Rows per sub-column: a tall column wraps so the drawing comes out about twice as wide as high (a column of
  // 500 rows is unreadable at any zoom that shows it whole). Wrapping stays inside the layer's x range, so a
  // requirement is still left of what requires it.
  const need = Float64Array.from(nodes, (n) => o.nodeSize + o.labelGap + o.measure(n.label) + o.colGap);
  let sumWidth = 0;
  for (let i = 0; i < N; i++) sumWidth += need[i];
  const estWidth = (1.3 * sumWidth) / Math.max(1, N); // a column is as wide as its widest label
  const auto = Math.round(Math.sqrt((N * estWidth * o.rowHeight) / 2) / o.rowHeight / Math.max(1, groups.length));
  const R = Math.max(1, o.maxRows ?? Math.max(8, auto));
  const subCols = new Int32Array(nLayers).fill(1);
  for (const cols of cells) cols.forEach((c, l) => (subCols[l] = Math.max(subCols[l], Math.ceil(c.length / R))));

  // Columns: as wide as the node plus its widest label, times the layer's sub-columns.
  const colWidth = new Float64Array(nLayers);
  for (let i = 0; i < N; i++) colWidth[layer[i]] = Math.max(colWidth[layer[i]], need[i]);
  const colX = new Float64Array(nLayers);
  for (let l = 1; l < nLayers; l++) colX[l] = colX[l - 1] + colWidth[l - 1] * subCols[l - 1];
  const width = nLayers ? colX[nLayers - 1] + colWidth[nLayers - 1] * subCols[nLayers - 1] : 0;

  const pos = new Map<string, Placed>();
  const bands: Band[] = [];
  let top = 0;
  groups.forEach((g, gi) => {
    const cols = cells[gi];
    let tallest = 0;
    for (const c of cols) tallest = Math.max(tallest, c.length);
    const rows = Math.min(R, tallest);
    const height = o.bandHeader + rows * o.rowHeight;
    cols.forEach((col, l) =>
      col.forEach((v, i) => {
        const r = i % R;
        const x = colX[l] + Math.floor(i / R) * colWidth[l] + o.nodeSize / 2;
        pos.set(nodes[v].id, { x, y: top + o.bandHeader + r * o.rowHeight + o.rowHeight / 2, layer: l, row: r });
      }),
    );
    bands.push({ group: g, top, height, count: cols.reduce((s, c) => s + c.length, 0) });
    top += height + o.bandGap;
  });
  return { pos, bands, width, height: Math.max(0, top - o.bandGap), layers: nLayers };
}
