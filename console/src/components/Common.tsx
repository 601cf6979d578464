// Small shared pieces: error banners, status badges, the summary bar, JSON values.
import type { ComponentChildren } from "preact";

export const kStatusColours: Record<string, string> = {
  deployed: "#2e7d32",
  available: "#757575",
  deploying: "#1565c0",
  failed: "#c62828",
  skipped: "#ef6c00",
  skipped_for_undefined: "#ad8b00",
  undefined: "#8e24aa",
  unavailable: "#6d4c41",
  non_compliant: "#d81b60",
  orphaned: "#9e9e9e",
  cancelled: "#9e9e9e",
  dry: "#00838f",
};

export const kResourceStates = [
  "deployed",
  "available",
  "deploying",
  "failed",
  "skipped",
  "skipped_for_undefined",
  "undefined",
  "unavailable",
  "non_compliant",
  "orphaned",
];

export function ErrorBanner({ error, onClose }: { error: string | null | undefined; onClose?: () => void }) {
  if (!error) return null;
  return (
    <div class="error" role="alert" data-testid="error">
      <span>{error}</span>
      {onClose && (
        <button class="link" onClick={onClose} aria-label="dismiss">
          ×
        </button>
      )}
    </div>
  );
}

export function Status({ status }: { status: string }) {
  return (
    <span class="badge" data-status={status} style={{ background: kStatusColours[status] ?? "#455a64" }}>
      {status}
    </span>
  );
}

export function SummaryBar({
  summary,
  links,
}: {
  summary?: { total: number; by_state: Record<string, number> };
  links?: (state: string) => string; // each state's legend entry links there when given
}) {
  if (!summary) return null;
  const total = summary.total || 0;
  const entries = Object.entries(summary.by_state).filter(([, n]) => n > 0);
  return (
    <div class="summary" data-testid="summary">
      <div class="summary-bar">
        {entries.map(([s, n]) => (
          <div
            key={s}
            title={`${s}: ${n}`}
            style={{ width: `${total ? (100 * n) / total : 0}%`, background: kStatusColours[s] ?? "#455a64" }}
          />
        ))}
      </div>
      <div class="summary-legend">
        <b>{total}</b> resources
        {entries.map(([s, n]) => (
          <span key={s} class="legend-item" data-state={s} data-count={n}>
            <i style={{ background: kStatusColours[s] ?? "#455a64" }} /> {links ? <a href={links(s)}>{s}</a> : s} {n}
          </span>
        ))}
      </div>
    </div>
  );
}

export function Json({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="muted">null</span>;
  if (typeof value === "string") return <span class="str">{value}</span>;
  if (typeof value === "object") return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
  return <span>{String(value)}</span>;
}

export function Loading({ when }: { when: boolean }) {
  return when ? <div class="muted">loading…</div> : null;
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section>
      <div class="section-head">
        <h2>{title}</h2>
        <div class="actions">{actions}</div>
      </div>
      {children}
    </section>
  );
}

// Every timestamp in the console is shown the same way: UTC, "YYYY-MM-DD HH:MM:SS UTC" (the server's log lines and
// API values are UTC too). Values without an offset are read as UTC, as the server writes them.
export function fmtDate(s: string | null | undefined): string {
  if (!s) return "";
  const d = new Date(s.endsWith("Z") || /[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`);
  if (isNaN(d.getTime())) return s;
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

// A commit id: the first 10 characters, the whole id as tooltip.
export function Commit({ sha }: { sha: unknown }) {
  if (typeof sha !== "string" || !sha) return <span class="muted">—</span>;
  return (
    <code class="commit" title={sha} data-commit={sha}>
      {sha.slice(0, 10)}
    </code>
  );
}

// The state of a compile report, as the compile list and the dashboard show it.
export interface CompileRow {
  id: string;
  requested: string;
  started?: string | null;
  completed?: string | null;
  success?: boolean | null;
  version?: number | null;
  do_export?: boolean;
  force_update?: boolean;
  metadata?: Record<string, unknown>;
  environment_variables?: Record<string, string>;
}
export const compileState = (c: CompileRow) =>
  !c.started ? "queued" : !c.completed ? "running" : c.success ? "success" : "failed";
