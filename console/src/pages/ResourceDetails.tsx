// One resource: attributes, requires (with their states), history of its desired state, the action log with
// structured fields (filter by action, level, message), and facts.
import { useState } from "preact/hooks";
import { api, query, seg } from "../api";
import { ErrorBanner, Json, Loading, Section, Status, fmtDate } from "../components/Common";
import { usePoll } from "../hooks";
import { href, navigate } from "../router";

interface Details {
  resource_id: string;
  resource_type: string;
  agent: string;
  id_attribute?: string;
  resource_id_value: string;
  status: string;
  last_deploy?: string | null;
  first_generated_time?: string;
  first_generated_version?: number;
  attributes: Record<string, unknown>;
  requires_status?: Record<string, string>;
}
interface LogLine {
  action_id: string;
  action: string;
  timestamp: string;
  level: string;
  msg: string;
  args?: unknown[];
  kwargs?: Record<string, unknown>;
}
interface HistoryEntry {
  resource_id?: string;
  date: string;
  attribute_hash: string;
  attributes: Record<string, unknown>;
  requires?: string[];
}

const kTabs = ["attributes", "requires", "logs", "history", "facts"];
const kLevels = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];

function Attributes({ attrs }: { attrs: Record<string, unknown> }) {
  return (
    <table class="table attrs" data-testid="attributes">
      <tbody>
        {Object.keys(attrs)
          .sort()
          .map((k) => (
            <tr key={k}>
              <th>{k}</th>
              <td>
                <Json value={attrs[k]} />
              </td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

function Logs({ env, rid }: { env: string; rid: string }) {
  const [action, setAction] = useState("");
  const [level, setLevel] = useState("");
  const [message, setMessage] = useState("");
  const url = `/api/v2/resource/${seg(rid)}/logs${query({
    limit: 200,
    "filter.action": action,
    "filter.minimal_log_level": level,
    "filter.message": message,
  })}`;
  const logs = usePoll(() => api.get<{ data: LogLine[] }>(url, env), [env, url], 3000);
  return (
    <div data-testid="logs">
      <div class="filters">
        <select aria-label="action" value={action} onChange={(e) => setAction((e.target as HTMLSelectElement).value)}>
          <option value="">all actions</option>
          {["deploy", "dryrun", "getfact", "store"].map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
        <select aria-label="minimal level" value={level} onChange={(e) => setLevel((e.target as HTMLSelectElement).value)}>
          <option value="">any level</option>
          {kLevels.map((l) => (
            <option key={l}>{l}</option>
          ))}
        </select>
        <input placeholder="message contains" value={message} onChange={(e) => setMessage((e.target as HTMLInputElement).value)} />
      </div>
      <ErrorBanner error={logs.error} />
      <Loading when={logs.loading && !logs.data} />
      {logs.data && logs.data.data.length === 0 && <div class="muted">no log lines</div>}
      <table class="table logs">
        <tbody>
          {(logs.data?.data ?? []).map((l, i) => (
            <tr key={i} class={`lvl-${l.level.toUpperCase()}`} data-level={l.level.toUpperCase()}>
              <td class="nowrap">{fmtDate(l.timestamp)}</td>
              <td>{l.action}</td>
              <td>
                <span class={`level lvl-${l.level.toUpperCase()}`}>{l.level.toUpperCase()}</span>
              </td>
              <td>
                <div class="msg">{l.msg}</div>
                {l.kwargs && Object.keys(l.kwargs).length > 0 && (
                  <details class="kwargs">
                    <summary>{Object.keys(l.kwargs).join(", ")}</summary>
                    <table class="table">
                      <tbody>
                        {Object.entries(l.kwargs).map(([k, v]) => (
                          <tr key={k}>
                            <th>{k}</th>
                            <td>{typeof v === "string" && v.includes("\n") ? <pre class="json">{v}</pre> : <Json value={v} />}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </details>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function History({ env, rid }: { env: string; rid: string }) {
  const h = usePoll(() => api.get<{ data: HistoryEntry[] }>(`/api/v2/resource/${seg(rid)}/history?limit=100`, env), [env, rid]);
  return (
    <div data-testid="history">
      <ErrorBanner error={h.error} />
      <Loading when={h.loading && !h.data} />
      {(h.data?.data ?? []).map((e) => (
        <details class="card" key={e.attribute_hash + e.date}>
          <summary>
            {fmtDate(e.date)} <code class="muted">{e.attribute_hash}</code>
          </summary>
          <Attributes attrs={e.attributes} />
        </details>
      ))}
    </div>
  );
}

function Facts({ env, rid }: { env: string; rid: string }) {
  const f = usePoll(
    () => api.get<{ data: { name: string; value: unknown; updated?: string; source?: string }[] }>(`/api/v2/resource/${seg(rid)}/facts`, env),
    [env, rid],
  );
  return (
    <div data-testid="facts">
      <ErrorBanner error={f.error} />
      {f.data && f.data.data.length === 0 && <div class="muted">no facts</div>}
      <table class="table">
        <tbody>
          {(f.data?.data ?? []).map((x) => (
            <tr key={x.name}>
              <th>{x.name}</th>
              <td>
                <Json value={x.value} />
              </td>
              <td class="muted">{fmtDate(x.updated)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ResourceDetails({ env, rid, tab }: { env: string; rid: string; tab: string }) {
  const d = usePoll(() => api.get<{ data: Details }>(`/api/v2/resource/${seg(rid)}`, env), [env, rid], 3000);
  const r = d.data?.data;
  return (
    <Section title={rid} actions={<a href={href("resources", { env })}>all resources</a>}>
      <ErrorBanner error={d.error} />
      <Loading when={d.loading && !r} />
      {r && (
        <div class="facts-line">
          <Status status={r.status} /> agent <b>{r.agent}</b> · type <b>{r.resource_type}</b>
          {r.last_deploy && <> · last deploy {fmtDate(r.last_deploy)}</>}
          {r.first_generated_version !== undefined && <> · since version {r.first_generated_version}</>}
        </div>
      )}
      <div class="tabs" role="tablist">
        {kTabs.map((t) => (
          <button
            key={t}
            role="tab"
            class={t === tab ? "active" : ""}
            onClick={() => navigate(href("resources/details", { env, rid, tab: t }), true)}
          >
            {t}
          </button>
        ))}
      </div>
      {tab === "attributes" && r && <Attributes attrs={r.attributes} />}
      {tab === "requires" && r && (
        <table class="table" data-testid="requires">
          <tbody>
            {Object.entries(r.requires_status ?? {}).map(([id, st]) => (
              <tr key={id}>
                <td>
                  <a href={href("resources/details", { env, rid: id })}>{id}</a>
                </td>
                <td>
                  <Status status={st} />
                </td>
              </tr>
            ))}
            {Object.keys(r.requires_status ?? {}).length === 0 && (
              <tr>
                <td class="muted">requires nothing</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      {tab === "logs" && <Logs env={env} rid={rid} />}
      {tab === "history" && <History env={env} rid={rid} />}
      {tab === "facts" && <Facts env={env} rid={rid} />}
    </Section>
  );
}
