// Draws a laid-out dependency graph on one canvas (ours; 10,000 nodes stay interactive): agent bands, edges,
// nodes coloured by state and their labels, with pan (drag), zoom (wheel, about the cursor), click to pick a node
// and a focus that fades everything outside a node's neighbourhood. Only what is inside the view is drawn; labels
// only from a readable zoom on. Redraws happen once per animation frame at most. Coordinates: world units are the
// layout's pixels at zoom 1; `labelBoxes()` gives each node's box (node + label) exactly as drawn, for the tests.

export interface ViewNode {
  id: string;
  label: string;
  x: number;
  y: number;
  colour: string;
}
export interface ViewBand {
  label: string;
  top: number;
  height: number;
}

const kRadius = 5;
const kLabelGap = 4;
export const kGraphFont = "Helvetica, Arial, sans-serif";
export const kGraphFontSize = 10;

export class GraphView {
  private canvas: HTMLCanvasElement;
  private ctx: CanvasRenderingContext2D;
  private zoom = 1;
  private panX = 0;
  private panY = 0;
  private frame = 0;
  private labelW: Float64Array;
  private index = new Map<string, number>();
  private adj: number[][];
  private near: Uint8Array | null = null; // focus: 1 = in the neighbourhood
  private focusIdx = -1;
  private grid = new Map<string, number[]>();
  private ro: ResizeObserver;
  private width: number;

  constructor(
    private box: HTMLElement,
    private nodes: ViewNode[],
    private edges: [number, number][],
    private bands: ViewBand[],
    private onPick: (id: string) => void,
  ) {
    this.canvas = document.createElement("canvas");
    this.canvas.style.display = "block";
    this.canvas.style.width = "100%";
    this.canvas.style.height = "100%";
    this.canvas.style.cursor = "grab";
    box.appendChild(this.canvas);
    this.ctx = this.canvas.getContext("2d")!;
    this.ctx.font = `${kGraphFontSize}px ${kGraphFont}`;
    this.labelW = new Float64Array(nodes.length);
    this.adj = nodes.map(() => []);
    let w = 0;
    nodes.forEach((n, i) => {
      this.index.set(n.id, i);
      this.labelW[i] = this.ctx.measureText(n.label).width;
      w = Math.max(w, n.x + kRadius + kLabelGap + this.labelW[i]);
      const key = `${Math.floor(n.x / 40)},${Math.floor(n.y / 40)}`;
      (this.grid.get(key) ?? this.grid.set(key, []).get(key)!).push(i);
    });
    this.width = w;
    for (const [a, b] of edges) {
      this.adj[a].push(b);
      this.adj[b].push(a);
    }
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(box);
    this.resize();
    this.fit();
    this.bindInput();
  }

  destroy(): void {
    this.ro.disconnect();
    cancelAnimationFrame(this.frame);
    this.canvas.remove();
  }

  setColours(colourOf: (id: string) => string | undefined): void {
    for (const n of this.nodes) n.colour = colourOf(n.id) ?? n.colour;
    this.redraw();
  }

  // The node, its requirements and dependents up to `depth` steps; returns the ids in the neighbourhood.
  focus(id: string | null, depth: number): string[] {
    const i = id ? this.index.get(id) : undefined;
    if (i === undefined) {
      this.near = null;
      this.focusIdx = -1;
      this.fit();
      return [];
    }
    const near = new Uint8Array(this.nodes.length);
    near[i] = 1;
    let frontier = [i];
    for (let d = 0; d < depth; d++) {
      const next: number[] = [];
      for (const v of frontier) for (const w of this.adj[v]) if (!near[w]) (near[w] = 1), next.push(w);
      frontier = next;
    }
    this.near = near;
    this.focusIdx = i;
    let [x1, y1, x2, y2] = [Infinity, Infinity, -Infinity, -Infinity];
    near.forEach((on, k) => {
      if (!on) return;
      const n = this.nodes[k];
      x1 = Math.min(x1, n.x - kRadius);
      y1 = Math.min(y1, n.y - kRadius);
      x2 = Math.max(x2, n.x + kRadius + kLabelGap + this.labelW[k]);
      y2 = Math.max(y2, n.y + kRadius);
    });
    this.fitRect(x1, y1, x2, y2, 40, 1.5);
    return this.nodes.filter((_, k) => near[k]).map((n) => n.id);
  }

  fit(): void {
    const last = this.bands.length ? this.bands[this.bands.length - 1] : null;
    this.fitRect(0, 0, this.width, last ? last.top + last.height : 100, 16, 1.5);
  }

  view(): { zoom: number; panX: number; panY: number } {
    return { zoom: this.zoom, panX: this.panX, panY: this.panY };
  }

  labelBoxes(): { id: string; x1: number; y1: number; x2: number; y2: number; lw: number }[] {
    const h = kGraphFontSize * 0.6;
    return this.nodes.map((n, i) => ({
      id: n.id,
      x1: n.x - kRadius,
      y1: n.y - Math.max(kRadius, h),
      x2: n.x + kRadius + kLabelGap + this.labelW[i],
      y2: n.y + Math.max(kRadius, h),
      lw: this.labelW[i],
    }));
  }

  faded(id: string): boolean {
    const i = this.index.get(id);
    return !!this.near && i !== undefined && !this.near[i];
  }

  private fitRect(x1: number, y1: number, x2: number, y2: number, pad: number, maxZoom: number): void {
    const cw = this.canvas.clientWidth || 800;
    const ch = this.canvas.clientHeight || 600;
    this.zoom = Math.min(maxZoom, (cw - 2 * pad) / Math.max(1, x2 - x1), (ch - 2 * pad) / Math.max(1, y2 - y1));
    this.panX = (cw - (x2 - x1) * this.zoom) / 2 - x1 * this.zoom;
    this.panY = (ch - (y2 - y1) * this.zoom) / 2 - y1 * this.zoom;
    this.redraw();
  }

  private resize(): void {
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.max(1, Math.round(this.box.clientWidth * dpr));
    this.canvas.height = Math.max(1, Math.round(this.box.clientHeight * dpr));
    this.redraw();
  }

  private bindInput(): void {
    let drag: { x: number; y: number; px: number; py: number; moved: boolean } | null = null;
    this.canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, px: this.panX, py: this.panY, moved: false };
      this.canvas.setPointerCapture(e.pointerId);
      this.canvas.style.cursor = "grabbing";
    });
    this.canvas.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      this.panX = drag.px + dx;
      this.panY = drag.py + dy;
      this.redraw();
    });
    this.canvas.addEventListener("pointerup", (e) => {
      const d = drag;
      drag = null;
      this.canvas.style.cursor = "grab";
      if (!d || d.moved) return;
      const r = this.canvas.getBoundingClientRect();
      const hit = this.pick((e.clientX - r.left - this.panX) / this.zoom, (e.clientY - r.top - this.panY) / this.zoom);
      if (hit >= 0) this.onPick(this.nodes[hit].id);
    });
    this.canvas.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        const r = this.canvas.getBoundingClientRect();
        const mx = e.clientX - r.left;
        const my = e.clientY - r.top;
        const z = Math.min(4, Math.max(0.005, this.zoom * Math.pow(1.0015, -e.deltaY)));
        this.panX = mx - ((mx - this.panX) * z) / this.zoom;
        this.panY = my - ((my - this.panY) * z) / this.zoom;
        this.zoom = z;
        this.redraw();
      },
      { passive: false },
    );
  }

  // The node whose circle or label is under the world point (x, y), or -1.
  private pick(x: number, y: number): number {
    let best = -1;
    const gx = Math.floor(x / 40);
    const gy = Math.floor(y / 40);
    for (let dx = -8; dx <= 1; dx++)
      for (let dy = -1; dy <= 1; dy++)
        for (const i of this.grid.get(`${gx + dx},${gy + dy}`) ?? []) {
          const n = this.nodes[i];
          const tol = Math.max(kRadius, 4 / this.zoom);
          if (x >= n.x - tol && x <= n.x + kRadius + kLabelGap + this.labelW[i] && Math.abs(y - n.y) <= tol) best = i;
        }
    return best;
  }

  redraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private draw(): void {
    const ctx = this.ctx;
    const dpr = window.devicePixelRatio || 1;
    const z = this.zoom;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.setTransform(dpr * z, 0, 0, dpr * z, dpr * this.panX, dpr * this.panY);
    // The visible world rectangle (with a margin for labels that start left of it).
    const vx1 = -this.panX / z - 300;
    const vy1 = -this.panY / z - 20;
    const vx2 = (this.canvas.width / dpr - this.panX) / z + 20;
    const vy2 = (this.canvas.height / dpr - this.panY) / z + 20;
    const inView = (n: ViewNode) => n.x >= vx1 && n.x <= vx2 && n.y >= vy1 && n.y <= vy2;

    for (const b of this.bands) {
      if (b.top > vy2 || b.top + b.height < vy1) continue;
      ctx.fillStyle = "rgba(228,236,244,0.55)";
      ctx.fillRect(-8, b.top, this.width + 16, b.height);
      ctx.strokeStyle = "#d9e2ec";
      ctx.lineWidth = 1 / z;
      ctx.strokeRect(-8, b.top, this.width + 16, b.height);
      if (z * 12 >= 5) {
        ctx.fillStyle = "#486581";
        ctx.font = `bold 12px ${kGraphFont}`;
        ctx.textBaseline = "top";
        const left = Math.max(-4, vx1 + 300 + 4);
        ctx.fillText(b.label, left, b.top + 5);
      }
    }

    // Edges: one path per look (normal, faded, in the focus).
    const near = this.near;
    const paths: [string, number, (a: number, b: number) => boolean][] = near
      ? [
          ["rgba(159,179,200,0.15)", 1, (a, b) => !(near[a] && near[b])],
          ["#1565c0", 2, (a, b) => !!(near[a] && near[b])],
        ]
      : [["#9fb3c8", 1, () => true]];
    for (const [colour, width, take] of paths) {
      ctx.beginPath();
      for (const [a, b] of this.edges) {
        if (!take(a, b)) continue;
        const na = this.nodes[a];
        const nb = this.nodes[b];
        if (Math.max(na.x, nb.x) < vx1 || Math.min(na.x, nb.x) > vx2 || Math.max(na.y, nb.y) < vy1 || Math.min(na.y, nb.y) > vy2) continue;
        ctx.moveTo(na.x + kRadius, na.y);
        ctx.lineTo(nb.x - kRadius, nb.y);
      }
      ctx.strokeStyle = colour;
      ctx.lineWidth = width / Math.max(z, 0.5);
      ctx.stroke();
    }

    // Nodes, batched by colour; squares when too small for a circle to matter.
    const byColour = new Map<string, number[]>();
    this.nodes.forEach((n, i) => {
      if (!inView(n)) return;
      const key = near && !near[i] ? `${n.colour}|f` : n.colour;
      (byColour.get(key) ?? byColour.set(key, []).get(key)!).push(i);
    });
    const round = z * kRadius >= 2;
    for (const [key, list] of byColour) {
      const [colour, faded] = key.split("|");
      ctx.globalAlpha = faded ? 0.15 : 1;
      ctx.fillStyle = colour;
      ctx.beginPath();
      for (const i of list) {
        const n = this.nodes[i];
        if (round) {
          ctx.moveTo(n.x + kRadius, n.y);
          ctx.arc(n.x, n.y, kRadius, 0, 2 * Math.PI);
        } else ctx.rect(n.x - kRadius, n.y - kRadius, 2 * kRadius, 2 * kRadius);
      }
      ctx.fill();
    }
    ctx.globalAlpha = 1;
    if (this.focusIdx >= 0) {
      const n = this.nodes[this.focusIdx];
      ctx.beginPath();
      ctx.arc(n.x, n.y, kRadius + 2, 0, 2 * Math.PI);
      ctx.strokeStyle = "#000";
      ctx.lineWidth = 2 / Math.max(z, 0.5);
      ctx.stroke();
    }

    // Labels once they are readable (10 px text at ≥ 6 px on screen).
    if (z * kGraphFontSize >= 6) {
      ctx.font = `${kGraphFontSize}px ${kGraphFont}`;
      ctx.textBaseline = "middle";
      this.nodes.forEach((n, i) => {
        if (!inView(n)) return;
        ctx.fillStyle = near && !near[i] ? "rgba(31,41,51,0.2)" : i === this.focusIdx ? "#000" : "#1f2933";
        ctx.fillText(n.label, n.x + kRadius + kLabelGap, n.y);
      });
    }
  }
}
