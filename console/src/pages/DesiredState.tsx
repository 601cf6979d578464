// Desired-state versions with their status and labels: promote (release), delete, dry-run, graph, and compare any
// two versions into a per-attribute diff.
import { useState } from "preact/hooks";
import { api, query, seg, versionsV1, type Paged, type ResourceDiff } from "../api";
import { Commit, ErrorBanner, Loading, Section, fmtDate } from "../components/Common";
import { DiffView } from "../components/DiffView";
import { useAction, usePoll } from "../hooks";
import { href, navigate } from "../router";

interface Version {
  version: number;
  date: string;
  total: number;
  status: string;
  labels?: { name: string; message: string }[];
  released?: boolean;
}

export function DesiredState({ env }: { env: string }) {
  const [url, setUrl] = useState(`/api/v2/desiredstate${query({ limit: 50, sort: "version.desc" })}`);
  const versions = usePoll(() => api.get<Paged<Version>>(url, env), [env, url], 3000);
  // The trigger and commit of each version come from its export metadata (v1 listing).
  const info = usePoll((signal) => versionsV1(env, 200, signal), [env], 5000);
  const [picked, setPicked] = useState<number[]>([]);
  const act = useAction();
  const rows = versions.data?.data ?? [];
  const toggle = (v: number) => setPicked((p) => (p.includes(v) ? p.filter((x) => x !== v) : [...p.slice(-1), v]));
  const [a, b] = [...picked].sort((x, y) => x - y);
  const links = versions.data?.links;
  return (
    <Section
      title="Desired state"
      actions={
        <button
          data-testid="compare"
          disabled={picked.length !== 2}
          onClick={() => navigate(href("desiredstate/compare", { env, from: a, to: b }))}
        >
          Compare {picked.length === 2 ? `${a} → ${b}` : "(pick two)"}
        </button>
      }
    >
      <ErrorBanner error={versions.error} />
      <ErrorBanner error={act.error} onClose={act.clear} />
      <Loading when={versions.loading && !versions.data} />
      {versions.data && rows.length === 0 && <div class="muted">No versions yet: export a model to this environment.</div>}
      {rows.length > 0 && (
        <table class="table versions">
          <thead>
            <tr>
              <th>Compare</th>
              <th>Version</th>
              <th>Date</th>
              <th>Status</th>
              <th>Resources</th>
              <th>Trigger</th>
              <th>Commit</th>
              <th>Message</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((v) => (
              <tr key={v.version} data-version={v.version} data-status={v.status} data-released={String(v.released ?? v.status !== "candidate")}>
                <td>
                  <input type="checkbox" aria-label={`pick version ${v.version}`} checked={picked.includes(v.version)} onChange={() => toggle(v.version)} />
                </td>
                <td>
                  <b>{v.version}</b>
                </td>
                <td>{fmtDate(v.date)}</td>
                <td>
                  <span class={`vstatus vs-${v.status}`}>{v.status}</span>
                  {v.status === "candidate" && v.released && <span class="muted small"> released, waiting for the scheduler</span>}
                </td>
                <td>{v.total}</td>
                <td data-testid="trigger">{info.data?.get(v.version)?.version_info?.export_metadata?.type ?? (v.labels ?? [])[0]?.name ?? ""}</td>
                <td>
                  <Commit sha={info.data?.get(v.version)?.version_info?.export_metadata?.commit} />
                </td>
                <td>{(v.labels ?? []).map((l) => l.message).join(" ")}</td>
                <td class="actions">
                  {v.status === "candidate" && !v.released && (
                    <button
                      disabled={act.busy}
                      onClick={() =>
                        act.run(async () => {
                          await api.post(`/api/v2/desiredstate/${seg(v.version)}/promote`, env);
                          versions.reload();
                        })
                      }
                    >
                      Promote
                    </button>
                  )}
                  <a href={href("graph", { env, version: v.version })}>graph</a>
                  <a href={href("dryrun", { env, version: v.version })}>dry run</a>
                  <button
                    disabled={act.busy}
                    onClick={() => {
                      if (!confirm(`Delete version ${v.version}?`)) return;
                      act.run(async () => {
                        await api.del(`/api/v1/version/${seg(v.version)}`, env);
                        versions.reload();
                      });
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        {links?.prev && <button onClick={() => setUrl(links.prev!)}>newer</button>}
        {links?.next && <button onClick={() => setUrl(links.next!)}>older</button>}
      </div>
    </Section>
  );
}

export function Compare({ env, from, to }: { env: string; from: string; to: string }) {
  const diff = usePoll(
    () => api.get<{ data: ResourceDiff[] }>(`/api/v2/desiredstate/diff/${seg(from)}/${seg(to)}`, env),
    [env, from, to],
  );
  return (
    <Section title={`Compare version ${from} → ${to}`} actions={<a href={href("desiredstate", { env })}>back to versions</a>}>
      <ErrorBanner error={diff.error} />
      <Loading when={diff.loading && !diff.data} />
      {diff.data && <DiffView diff={diff.data.data} />}
    </Section>
  );
}
