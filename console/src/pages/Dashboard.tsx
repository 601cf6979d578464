// The environment dashboard, the landing page of an environment: deploy progress by state, the last versions with
// their state, trigger and commit, the last compile and its result, the agents, and recent failures (resources and
// compiles) with links to their pages. Every panel is one small polled request; nothing here reads a whole
// environment, so a 100k-resource environment costs the same as a small one.
import { api, idParts, query, versionsV1, type Paged, type ResourceRow } from "../api";
import { Commit, ErrorBanner, Section, Status, SummaryBar, compileState, fmtDate, type CompileRow } from "../components/Common";
import { usePoll } from "../hooks";
import { href } from "../router";
import { agentUri, useAgentMap, type Agent } from "./Agents";

interface Version {
  version: number;
  date: string;
  total: number;
  status: string;
  released?: boolean;
}

function Versions({ env }: { env: string }) {
  const ds = usePoll(() => api.get<Paged<Version>>(`/api/v2/desiredstate${query({ limit: 5 })}`, env), [env], 3000);
  const v1 = usePoll((signal) => versionsV1(env, 5, signal), [env], 3000);
  const rows = ds.data?.data ?? [];
  return (
    <div class="card" data-testid="dash-versions">
      <h3>
        Last versions <a class="small" href={href("desiredstate", { env })}>all versions</a>
      </h3>
      <ErrorBanner error={ds.error ?? v1.error} />
      {ds.data && rows.length === 0 && <div class="muted">No versions yet: export a model to this environment.</div>}
      {rows.length > 0 && (
        <table class="table">
          <thead>
            <tr>
              <th>Version</th>
              <th>State</th>
              <th>Deployed</th>
              <th>Trigger</th>
              <th>Commit</th>
              <th>Date</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((v) => {
              const info = v1.data?.get(v.version);
              const meta = info?.version_info?.export_metadata;
              return (
                <tr key={v.version} data-version={v.version} data-status={v.status}>
                  <td>
                    <a href={href("graph", { env, version: v.version })}>{v.version}</a>
                  </td>
                  <td>
                    <span class={`vstatus vs-${v.status}`}>{v.status}</span>
                  </td>
                  <td class="nowrap">
                    {info?.released ? `${info.done ?? 0} / ${info.total}` : <span class="muted">not released</span>}
                    {info?.released && info.result ? <span class={`small res-${info.result}`}> {info.result}</span> : null}
                  </td>
                  <td data-testid="trigger" title={meta?.message ?? ""}>
                    {meta?.type ?? ""}
                    {meta?.compile_id ? (
                      <>
                        {" "}
                        <a class="small" href={href("compilereports", { env, id: meta.compile_id })}>
                          compile
                        </a>
                      </>
                    ) : null}
                  </td>
                  <td>
                    <Commit sha={meta?.commit} />
                  </td>
                  <td class="nowrap">{fmtDate(v.date)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}

function LastCompile({ env }: { env: string }) {
  const list = usePoll(() => api.get<Paged<CompileRow>>(`/api/v2/compilereport${query({ limit: 10 })}`, env), [env], 3000);
  const rows = list.data?.data ?? [];
  const c = rows[0];
  return (
    <div class="card" data-testid="dash-compile">
      <h3>
        Last compile <a class="small" href={href("compilereports", { env })}>all compiles</a>
      </h3>
      <ErrorBanner error={list.error} />
      {list.data && !c && <div class="muted">No compiles yet.</div>}
      {c && (
        <div class="kv" data-compile={c.id} data-state={compileState(c)}>
          <a class={`cstate cs-${compileState(c)}`} href={href("compilereports", { env, id: c.id })}>
            {compileState(c)}
          </a>{" "}
          requested {fmtDate(c.requested)}
          {c.completed && <> · completed {fmtDate(c.completed)}</>}
          {c.version ? (
            <>
              {" "}
              · version <a href={href("graph", { env, version: c.version })}>{c.version}</a>
            </>
          ) : null}
          {c.metadata?.commit ? (
            <>
              {" "}
              · commit <Commit sha={c.metadata.commit} />
            </>
          ) : null}
          {c.metadata?.message ? <div class="muted small">{String(c.metadata.message)}</div> : null}
        </div>
      )}
    </div>
  );
}

function Agents({ env }: { env: string }) {
  const agents = usePoll(() => api.get<{ data: Agent[] }>("/api/v2/agents?limit=1000", env), [env], 3000);
  const map = useAgentMap(env);
  const all = (agents.data?.data ?? []).filter((a) => a.name !== "$__scheduler");
  const count = (s: string) => all.filter((a) => a.status === s).length;
  const shown = [...all]
    .sort((a, b) => Number(a.status === "up") - Number(b.status === "up") || a.name.localeCompare(b.name, undefined, { numeric: true }))
    .slice(0, 12);
  return (
    <div class="card" data-testid="dash-agents">
      <h3>
        Agents <a class="small" href={href("agents", { env })}>all agents</a>
      </h3>
      <ErrorBanner error={agents.error} />
      {agents.data && (
        <div class="counts">
          <span class="agent-state as-up" data-count-up={count("up")}>{count("up")} up</span>
          <span class="agent-state as-down" data-count-down={count("down")}>{count("down")} down</span>
          <span class="agent-state as-paused" data-count-paused={count("paused")}>{count("paused")} paused</span>
          <span class="muted small">
            {all.filter((a) => a.external).length} external, {all.filter((a) => !a.external).length} autostarted
          </span>
        </div>
      )}
      {shown.length > 0 && (
        <table class="table">
          <tbody>
            {shown.map((a) => (
              <tr key={a.name} data-agent={a.name} data-state={a.status}>
                <td>{a.name}</td>
                <td>
                  <span class={`agent-state as-${a.status}`}>{a.status}</span>
                </td>
                <td>{a.external ? "external" : "autostarted"}</td>
                <td class="small">
                  <code>{agentUri(a, map)}</code> {a.external && a.process_name ? <span class="muted">{a.process_name}</span> : null}
                  {(a.standbys ?? []).length > 0 ? <span class="muted"> +{a.standbys!.length} standby</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {all.length > shown.length && <div class="muted small">and {all.length - shown.length} more (down and paused first)</div>}
    </div>
  );
}

function Failures({ env }: { env: string }) {
  const failed = usePoll(
    () => api.get<Paged<ResourceRow & { last_deploy?: string }>>(`/api/v2/resource${query({ "filter.status": "failed", limit: 10 })}`, env),
    [env],
    3000,
  );
  const compiles = usePoll(() => api.get<Paged<CompileRow>>(`/api/v2/compilereport${query({ limit: 10 })}`, env), [env], 5000);
  const badCompiles = (compiles.data?.data ?? []).filter((c) => compileState(c) === "failed").slice(0, 3);
  const rows = failed.data?.data ?? [];
  const total = failed.data?.metadata?.total;
  return (
    <div class="card" data-testid="dash-failures">
      <h3>
        Recent failures{" "}
        <a class="small" href={href("resources", { env, status: "failed" })}>
          all failed resources
        </a>
      </h3>
      <ErrorBanner error={failed.error ?? compiles.error} />
      {failed.data && rows.length === 0 && badCompiles.length === 0 && <div class="muted">No failed resources or compiles.</div>}
      {rows.length > 0 && (
        <table class="table">
          <tbody>
            {rows.map((r) => (
              <tr key={r.resource_id} data-failed={r.resource_id}>
                <td>
                  <Status status={r.status} />
                </td>
                <td>
                  <a href={href("resources/details", { env, rid: r.resource_id, tab: "logs" })}>{idParts(r).resource_id_value}</a>{" "}
                  <span class="muted small">{r.resource_id}</span>
                </td>
                <td class="nowrap small">{fmtDate(r.last_deploy)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {total !== undefined && total > rows.length && <div class="muted small">{total} failed resources in all</div>}
      {badCompiles.map((c) => (
        <div key={c.id} class="small" data-failed-compile={c.id}>
          <a class="cstate cs-failed" href={href("compilereports", { env, id: c.id })}>
            compile failed
          </a>{" "}
          {fmtDate(c.requested)} {c.metadata?.commit ? <Commit sha={c.metadata.commit} /> : null}
        </div>
      ))}
    </div>
  );
}

export function Dashboard({ env }: { env: string }) {
  const summary = usePoll(() => api.get<Paged<ResourceRow>>(`/api/v2/resource${query({ deploy_summary: true, limit: 1 })}`, env), [env], 2000);
  const s = summary.data?.metadata?.deploy_summary;
  return (
    <Section title="Dashboard">
      <ErrorBanner error={summary.error} />
      <div class="card" data-testid="dash-progress">
        <h3>
          Deploy progress <a class="small" href={href("resources", { env })}>all resources</a>
        </h3>
        {s && s.total === 0 && <div class="muted">No resources in the latest released version.</div>}
        {s && s.total > 0 && <SummaryBar summary={s} links={(state) => href("resources", { env, status: state })} />}
      </div>
      <div class="dash-grid">
        <Versions env={env} />
        <LastCompile env={env} />
        <Agents env={env} />
        <Failures env={env} />
      </div>
    </Section>
  );
}
