// Compile reports: the queue and past compiles, each with its stages' commands and output; Recompile and
// Update & recompile.
import { useState } from "preact/hooks";
import { api, query, seg, type Paged } from "../api";
import { Commit, ErrorBanner, Json, Loading, Section, compileState as state, fmtDate, type CompileRow } from "../components/Common";
import { useAction, usePoll } from "../hooks";
import { href } from "../router";

type Compile = CompileRow;
interface Stage {
  id?: string;
  name: string;
  command: string;
  started: string;
  completed?: string | null;
  returncode?: number | null;
  outstream: string;
  errstream: string;
}


function Detail({ env, id }: { env: string; id: string }) {
  const d = usePoll(() => api.get<{ data: Compile & { reports?: Stage[]; compile_data?: unknown } }>(`/api/v2/compilereport/${seg(id)}`, env), [env, id], 2000);
  const c = d.data?.data;
  return (
    <div class="card" data-testid="compile-detail">
      <h3>Compile {id}</h3>
      <ErrorBanner error={d.error} />
      <Loading when={d.loading && !c} />
      {c && (
        <>
          <div>
            <span class={`cstate cs-${state(c)}`}>{state(c)}</span> requested {fmtDate(c.requested)}
            {c.completed ? <> · completed {fmtDate(c.completed)}</> : null}
            {c.version ? <> · version {c.version}</> : null}
            {c.metadata?.commit ? <> · commit <Commit sha={c.metadata.commit} /></> : null}
          </div>
          {(c.reports ?? []).map((s, i) => (
            <details class="stage" key={s.id ?? i} open={s.returncode !== 0 && s.returncode !== undefined && s.returncode !== null}>
              <summary>
                <b>{s.name}</b> <span class={s.returncode === 0 ? "ok" : "bad"}>rc {s.returncode ?? "…"}</span>{" "}
                <span class="muted">{fmtDate(s.started)}</span>
              </summary>
              {s.command && <pre class="cmd">$ {s.command}</pre>}
              {s.outstream && <pre class="out">{s.outstream}</pre>}
              {s.errstream && <pre class="err">{s.errstream}</pre>}
            </details>
          ))}
          {c.compile_data ? (
            <div>
              <h4>Compile data</h4>
              <Json value={c.compile_data} />
            </div>
          ) : null}
        </>
      )}
    </div>
  );
}

export function CompileReports({ env, id }: { env: string; id: string }) {
  const [url, setUrl] = useState(`/api/v2/compilereport${query({ limit: 50, sort: "requested.desc" })}`);
  const list = usePoll(() => api.get<Paged<Compile>>(url, env), [env, url], 3000);
  const act = useAction();
  const [notice, setNotice] = useState("");
  const recompile = (update: boolean) =>
    act.run(async () => {
      await api.post(`/api/v1/notify/${seg(env)}`, env, { update, metadata: { type: "console", message: update ? "Update & recompile from the console" : "Recompile from the console" } });
      setNotice(update ? "update and recompile requested" : "recompile requested");
      list.reload();
    });
  const links = list.data?.links;
  return (
    <Section
      title="Compile reports"
      actions={
        <>
          <button data-testid="recompile" disabled={act.busy} onClick={() => recompile(false)}>
            Recompile
          </button>
          <button data-testid="update-recompile" disabled={act.busy} onClick={() => recompile(true)}>
            Update &amp; recompile
          </button>
        </>
      }
    >
      {notice && <div class="notice">{notice}</div>}
      <ErrorBanner error={list.error} />
      <ErrorBanner error={act.error} onClose={act.clear} />
      <Loading when={list.loading && !list.data} />
      {id && <Detail env={env} id={id} />}
      {list.data && list.data.data.length === 0 && <div class="muted">no compiles yet</div>}
      <table class="table">
        <thead>
          <tr>
            <th>Requested</th>
            <th>State</th>
            <th>Version</th>
            <th>Commit</th>
            <th>Trigger</th>
            <th>Message</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.data ?? []).map((c) => (
            <tr key={c.id} class={c.id === id ? "selected" : ""} data-compile={c.id}>
              <td>
                <a href={href("compilereports", { env, id: c.id })}>{fmtDate(c.requested)}</a>
              </td>
              <td>
                <a class={`cstate cs-${state(c)}`} data-testid="compile-state" href={href("compilereports", { env, id: c.id })} title="open the report">
                  {state(c)}
                </a>
              </td>
              <td>{c.version ? <a href={href("graph", { env, version: c.version })}>{c.version}</a> : ""}</td>
              <td>
                <Commit sha={c.metadata?.commit} />
              </td>
              <td>{String(c.metadata?.type ?? "")}</td>
              <td>{String(c.metadata?.message ?? "")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="pager">
        {links?.prev && <button onClick={() => setUrl(links.prev!)}>newer</button>}
        {links?.next && <button onClick={() => setUrl(links.next!)}>older</button>}
      </div>
    </Section>
  );
}
