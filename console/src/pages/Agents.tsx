// Agents of an environment: state, pause/unpause (one or all), deploy/repair per agent, on-resume flag.
import { api, seg } from "../api";
import { ErrorBanner, Loading, Section, fmtDate } from "../components/Common";
import { useAction, usePoll } from "../hooks";

interface Agent {
  name: string;
  status: string;
  paused: boolean;
  unpause_on_resume?: boolean | null;
  last_failover?: string | null;
  external?: boolean; // claimed by an `inmanta agent` process (docs/deploy.md "External agents")
  connected?: boolean;
  process_name?: string | null; // the holder of an external agent: "<host> pid <pid> via <peer address>"
  standbys?: string[]; // further `inmanta agent` claims waiting to take over, in promotion order
}

// Where an agent runs. An autostarted agent runs where the environment's `autostart_agent_map` sends it: its
// own entry (`local:` or `ssh://user@host:port`, docs/deploy.md "Agentless over SSH"), else `local:` (the
// scheduler's host); an external agent runs where its `inmanta agent` session connected from (the holder's
// peer address).
export function agentUri(a: Agent, map?: Record<string, unknown>): string {
  if (!a.external) {
    const uri = map?.[a.name];
    return typeof uri === "string" && uri !== "" ? uri : "local:";
  }
  const m = /via (\S+)/.exec(a.process_name ?? "");
  return m ? `remote: ${m[1]}` : "remote";
}
export type { Agent };

// The environment's autostart_agent_map (refreshed with the agents), for agentUri.
export function useAgentMap(env: string): Record<string, unknown> | undefined {
  const s = usePoll(
    () => api.get<{ data: { settings: Record<string, unknown> } }>("/api/v2/environment_settings/autostart_agent_map", env),
    [env],
    5000,
  );
  const v = s.data?.data?.settings?.autostart_agent_map;
  return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
}

export function Agents({ env }: { env: string }) {
  const agents = usePoll(() => api.get<{ data: Agent[] }>("/api/v2/agents?limit=1000", env), [env], 2000);
  const map = useAgentMap(env);
  const act = useAction();
  const run = (fn: () => Promise<unknown>) =>
    act.run(async () => {
      await fn();
      agents.reload();
    });
  return (
    <Section
      title="Agents"
      actions={
        <>
          <button disabled={act.busy} onClick={() => run(() => api.post("/api/v2/agents/pause", env))}>
            Pause all
          </button>
          <button disabled={act.busy} onClick={() => run(() => api.post("/api/v2/agents/unpause", env))}>
            Unpause all
          </button>
        </>
      }
    >
      <ErrorBanner error={agents.error} />
      <ErrorBanner error={act.error} onClose={act.clear} />
      <Loading when={agents.loading && !agents.data} />
      <table class="table agents">
        <thead>
          <tr>
            <th>Agent</th>
            <th>State</th>
            <th>Mode</th>
            <th>URI</th>
            <th>Holder</th>
            <th>Last failover</th>
            <th>Unpause on resume</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(agents.data?.data ?? []).map((a) => (
            <tr key={a.name} data-agent={a.name} data-state={a.status}>
              <td>
                <b>{a.name}</b>
              </td>
              <td>
                <span class={`agent-state as-${a.status}`}>{a.status}</span>
              </td>
              <td data-testid="agent-mode">{a.name === "$__scheduler" ? "scheduler" : a.external ? "external" : "autostarted"}</td>
              <td data-testid="agent-uri">
                <code>{agentUri(a, map)}</code>
              </td>
              <td class="small">
                {a.external ? a.process_name || <span class="muted">never claimed</span> : <span class="muted">scheduler</span>}
                {a.external && !a.connected ? <span class="muted"> (disconnected)</span> : null}
                {(a.standbys ?? []).length > 0 && (
                  <div class="muted" data-testid="agent-standbys" data-count={a.standbys!.length}>
                    standbys: {a.standbys!.join("; ")}
                  </div>
                )}
              </td>
              <td>{fmtDate(a.last_failover)}</td>
              <td>{a.unpause_on_resume === null || a.unpause_on_resume === undefined ? "" : String(a.unpause_on_resume)}</td>
              <td class="actions">
                <button disabled={act.busy} onClick={() => run(() => api.post(`/api/v2/agent/${seg(a.name)}/${a.paused ? "unpause" : "pause"}`, env))}>
                  {a.paused ? "Unpause" : "Pause"}
                </button>
                {a.name !== "$__scheduler" && (
                  <>
                    <button
                      disabled={act.busy}
                      onClick={() => run(() => api.post("/api/v1/deploy", env, { agent_trigger_method: "push_incremental_deploy", agents: [a.name] }))}
                    >
                      Deploy
                    </button>
                    <button
                      disabled={act.busy}
                      onClick={() => run(() => api.post("/api/v1/deploy", env, { agent_trigger_method: "push_full_deploy", agents: [a.name] }))}
                    >
                      Repair
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
