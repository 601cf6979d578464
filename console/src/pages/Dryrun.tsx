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
    () => api.get<{ data: { summary: DryrunSummary; diff: ResourceDiff[] } }>(`/api/v2/dryrun/${seg(version)}/${seg(id)}`, env),
    [env, version, id],
    1500,
  );
  const d = rep.data?.data;
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
