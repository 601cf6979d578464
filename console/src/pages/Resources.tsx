// The latest resources of an environment: server-side filtering, sorting and paging (the server's `links`), a
// summary bar by deploy state, live state by polling the current page, Deploy and Repair buttons. Filters and
// sort live in the address, so a filtered view is a link.
import { useEffect, useState } from "preact/hooks";
import { api, idParts, query, type Paged, type ResourceRow } from "../api";
import { ErrorBanner, Section, Status, SummaryBar, kResourceStates } from "../components/Common";
import { VirtualRows } from "../components/VirtualRows";
import { useAction, usePoll } from "../hooks";
import { href, navigate } from "../router";

const kColumns: [string, string][] = [
  ["Type", "resource_type"],
  ["Agent", "agent"],
  ["Value", "resource_id_value"],
  ["Status", "status"],
];

export function Resources({ env, params }: { env: string; params: URLSearchParams }) {
  const type = params.get("type") ?? "";
  const agent = params.get("agent") ?? "";
  const value = params.get("value") ?? "";
  const statuses = params.getAll("status");
  const sort = params.get("sort") ?? "resource_type.asc";
  const limit = Number(params.get("limit") ?? 100);

  const first = `/api/v2/resource${query({
    limit,
    sort,
    deploy_summary: true,
    "filter.resource_type": type,
    "filter.agent": agent,
    "filter.resource_id_value": value,
    "filter.status": statuses,
  })}`;
  const [pageUrl, setPageUrl] = useState(first);
  useEffect(() => setPageUrl(first), [first]);
  const page = usePoll(() => api.get<Paged<ResourceRow>>(pageUrl, env), [env, pageUrl], 2000);
  const act = useAction();
  const [notice, setNotice] = useState("");

  const set = (changes: Record<string, string | string[]>) => {
    const q: Record<string, string | string[]> = { env, type, agent, value, status: statuses, sort, limit: String(limit), ...changes };
    const sp = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) {
      if (Array.isArray(v)) v.forEach((x) => sp.append(k, x));
      else if (v) sp.set(k, v);
    }
    navigate(`${href("resources")}?${sp}`, true);
  };
  const [sortField, sortDir] = sort.split(".");
  const sortBy = (f: string) => set({ sort: `${f}.${sortField === f && sortDir === "asc" ? "desc" : "asc"}` });
  const trigger = (method: string, label: string) =>
    act.run(async () => {
      await api.post("/api/v1/deploy", env, { agent_trigger_method: method });
      setNotice(`${label} requested`);
    });
  const rows = page.data?.data ?? [];
  const md = page.data?.metadata;
  const links = page.data?.links;

  return (
    <Section
      title="Resources"
      actions={
        <>
          <button data-testid="deploy" disabled={act.busy} onClick={() => trigger("push_incremental_deploy", "Deploy")}>
            Deploy
          </button>
          <button data-testid="repair" disabled={act.busy} onClick={() => trigger("push_full_deploy", "Repair")}>
            Repair
          </button>
        </>
      }
    >
      <SummaryBar summary={md?.deploy_summary} />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <input
          placeholder="type contains"
          name="type"
          value={type}
          onChange={(e) => set({ type: (e.target as HTMLInputElement).value })}
        />
        <input placeholder="agent" name="agent" value={agent} onChange={(e) => set({ agent: (e.target as HTMLInputElement).value })} />
        <input
          placeholder="value contains"
          name="value"
          value={value}
          onChange={(e) => set({ value: (e.target as HTMLInputElement).value })}
        />
        <div class="status-filter">
          {kResourceStates.map((s) => (
            <label key={s}>
              <input
                type="checkbox"
                name={`status-${s}`}
                checked={statuses.includes(s)}
                onChange={() => set({ status: statuses.includes(s) ? statuses.filter((x) => x !== s) : [...statuses, s] })}
              />
              {s}
            </label>
          ))}
        </div>
        <select aria-label="page size" value={String(limit)} onChange={(e) => set({ limit: (e.target as HTMLSelectElement).value })}>
          {[20, 100, 500, 1000].map((n) => (
            <option key={n} value={n}>
              {n} per page
            </option>
          ))}
        </select>
      </form>
      {notice && <div class="notice">{notice}</div>}
      <ErrorBanner error={act.error} onClose={act.clear} />
      <ErrorBanner error={page.error} />
      <VirtualRows
        testId="resource-table"
        rows={rows}
        header={
          <div class="vrow head">
            {kColumns.map(([label, f]) => (
              <span key={f} class={`c-${f} sortable`} onClick={() => sortBy(f)}>
                {label} {sortField === f ? (sortDir === "asc" ? "▲" : "▼") : ""}
              </span>
            ))}
          </div>
        }
        render={(r) => {
          const id = idParts(r);
          return (
          <>
            <span class="c-resource_type">{id.resource_type}</span>
            <span class="c-agent">{id.agent}</span>
            <span class="c-resource_id_value">
              <a href={href("resources/details", { env, rid: r.resource_id })} title={r.resource_id}>
                {id.resource_id_value}
              </a>
            </span>
            <span class="c-status">
              <Status status={r.status} />
            </span>
          </>
          );
        }}
      />
      {page.data && rows.length === 0 && <div class="muted">no resources match</div>}
      <div class="pager" data-testid="pager">
        <button disabled={!links?.first || pageUrl === links.first} onClick={() => links?.first && setPageUrl(links.first)}>
          first
        </button>
        <button disabled={!links?.prev} onClick={() => links?.prev && setPageUrl(links.prev)}>
          prev
        </button>
        <span>
          {md?.before !== undefined ? `${md.before + (rows.length ? 1 : 0)}–${md.before + rows.length}` : rows.length} of {md?.total ?? "?"}
        </span>
        <button disabled={!links?.next} onClick={() => links?.next && setPageUrl(links.next)}>
          next
        </button>
        <button disabled={!links?.last || pageUrl === links.last} onClick={() => links?.last && setPageUrl(links.last)}>
          last
        </button>
      </div>
    </Section>
  );
}
