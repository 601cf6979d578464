// Dry runs of one version: request one, watch its progress (total/todo), view its per-attribute diff.
import { api, seg, type ResourceDiff } from "../api";
import { ErrorBanner, Loading, Section, fmtDate } from "../components/Common";
import { DiffView } from "../components/DiffView";
import { useAction, usePoll } from "../hooks";
import { href, navigate } from "../router";

interface DryrunSummary {
  id: string;
  version?: number;
  model?: number;
  date: string;
  total: number;
  todo: number;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object")
    return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  return v;
}

// Python's str()/json.dumps view of a value, as the reference's *_compare strings hold it.
function compareString(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "object") return JSON.stringify(sortKeys(v), null, 4);
  return String(v);
}

interface RawReport {
  summary?: DryrunSummary;
  diff?: ResourceDiff[];
  // The stored row, as some servers answer: rvid -> {changes: {attr: {current, desired}}, diff_status}.
  id?: string;
  model?: number;
  date?: string;
  total?: number;
  todo?: number;
  resources?: Record<string, { changes?: Record<string, { current?: unknown; desired?: unknown }>; diff_status?: string }>;
}

// Accepts both the §6.11 report ({summary, diff}) and the raw dry-run row.
export function normalizeReport(r: RawReport): { summary: DryrunSummary; diff: ResourceDiff[] } {
  if (r.summary && r.diff) return { summary: r.summary, diff: r.diff };
  const summary: DryrunSummary = { id: r.id ?? "", model: r.model, date: r.date ?? "", total: r.total ?? 0, todo: r.todo ?? 0 };
  const diff: ResourceDiff[] = Object.entries(r.resources ?? {})
    .map(([rvid, e]) => ({
      resource_id: rvid.replace(/,v=\d+$/, ""),
      status: e.diff_status ?? "unmodified",
      attributes: Object.fromEntries(
        Object.entries(e.changes ?? {}).map(([k, c]) => [
          k,
          { from_value: c.current, to_value: c.desired, from_value_compare: compareString(c.current), to_value_compare: compareString(c.desired) },
        ]),
      ),
    }))
    .sort((a, b) => (a.resource_id < b.resource_id ? -1 : 1));
  return { summary, diff };
}

function Progress({ total, todo }: { total: number; todo: number }) {
  const done = total - todo;
  return (
    <div class="progress" data-testid="dryrun-progress" data-done={todo === 0 ? "true" : "false"}>
      <div style={{ width: `${total ? (100 * done) / total : 100}%` }} />
      <span>
        {done} / {total} {todo === 0 ? "done" : "running…"}
      </span>
    </div>
  );
}

function Report({ env, version, id }: { env: string; version: string; id: string }) {
  const rep = usePoll(
    async () => normalizeReport((await api.get<{ data: RawReport }>(`/api/v2/dryrun/${seg(version)}/${seg(id)}`, env)).data),
    [env, version, id],
    1500,
  );
  const d = rep.data;
  return (
    <div class="card">
      <h3>Report {id}</h3>
      <ErrorBanner error={rep.error} />
      <Loading when={rep.loading && !d} />
      {d && (
        <>
          <Progress total={d.summary.total} todo={d.summary.todo} />
          <DiffView diff={d.diff} />
        </>
      )}
    </div>
  );
}

export function Dryrun({ env, version, id }: { env: string; version: string; id: string }) {
  const versions = usePoll(() => api.get<{ data: { version: number; status: string }[] }>("/api/v2/desiredstate?limit=100", env), [env]);
  const list = usePoll(
    () => (version ? api.get<{ data: DryrunSummary[] }>(`/api/v2/dryrun/${seg(version)}`, env) : Promise.resolve({ data: [] })),
    [env, version],
    1500,
  );
  const act = useAction();
  return (
    <Section
      title="Dry runs"
      actions={
        <>
          <select
            aria-label="version"
            value={version}
            onChange={(e) => navigate(href("dryrun", { env, version: (e.target as HTMLSelectElement).value }))}
          >
            <option value="">pick a version…</option>
            {versions.data?.data.map((v) => (
              <option key={v.version} value={v.version}>
                {v.version} ({v.status})
              </option>
            ))}
          </select>
          <button
            data-testid="request-dryrun"
            disabled={!version || act.busy}
            onClick={() =>
              act.run(async () => {
                const r = await api.post<{ data: DryrunSummary }>(`/api/v2/dryrun/${seg(version)}`, env);
                list.reload();
                if (r?.data?.id) navigate(href("dryrun", { env, version, id: r.data.id }));
              })
            }
          >
            Request dry run
          </button>
        </>
      }
    >
      <ErrorBanner error={versions.error ?? list.error} />
      <ErrorBanner error={act.error} onClose={act.clear} />
      {version && (
        <table class="table">
          <thead>
            <tr>
              <th>Dry run</th>
              <th>Date</th>
              <th>Progress</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.data ?? []).map((d) => (
              <tr key={d.id} class={d.id === id ? "selected" : ""}>
                <td>
                  <a href={href("dryrun", { env, version, id: d.id })}>{d.id}</a>
                </td>
                <td>{fmtDate(d.date)}</td>
                <td>
                  {d.total - d.todo} / {d.total}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {version && id && <Report env={env} version={version} id={id} />}
    </Section>
  );
}
