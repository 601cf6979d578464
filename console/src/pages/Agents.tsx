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
}

export function Agents({ env }: { env: string }) {
  const agents = usePoll(() => api.get<{ data: Agent[] }>("/api/v2/agents?limit=1000", env), [env], 2000);
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
