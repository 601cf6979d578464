// Entry point: the layout (environment selector, navigation, halt/resume) and the page chosen by the route.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, getToken, setToken, setUnauthorizedHandler, type Environment } from "./api";
import { ErrorBanner } from "./components/Common";
import { usePoll, useAction } from "./hooks";
import { href, navigate, onLinkClick, useRoute } from "./router";
import { Home } from "./pages/Home";
import { Settings } from "./pages/Settings";
import { DesiredState, Compare } from "./pages/DesiredState";
import { Resources } from "./pages/Resources";
import { ResourceDetails } from "./pages/ResourceDetails";
import { Graph } from "./pages/Graph";
import { Dryrun } from "./pages/Dryrun";
import { CompileReports } from "./pages/CompileReports";
import { Agents } from "./pages/Agents";
import { Dashboard } from "./pages/Dashboard";
import "./style.css";

const kEnvPages: [string, string][] = [
  ["dashboard", "Dashboard"],
  ["resources", "Resources"],
  ["desiredstate", "Desired state"],
  ["graph", "Graph"],
  ["dryrun", "Dry runs"],
  ["compilereports", "Compile reports"],
  ["agents", "Agents"],
  ["settings", "Settings"],
];

function Login({ next, reason, onDone }: { next: string; reason: string; onDone: () => void }) {
  const [token, setTok] = useState("");
  return (
    <div class="login" data-testid="login">
      <h1>Log in</h1>
      <p>The server requires authentication. Paste an API token (for example from <code>inmanta-cli token create --api</code>).</p>
      <ErrorBanner error={reason ? `${getToken() ? "The token was refused" : "Not logged in"}: ${reason}` : null} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!token.trim()) return;
          setToken(token.trim());
          onDone();
          navigate(next || href(""), true);
        }}
      >
        <textarea
          name="token"
          rows={4}
          autofocus
          value={token}
          onInput={(e) => setTok((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            // Enter submits (a token has no line breaks); Shift+Enter is left alone.
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              (e.currentTarget as HTMLTextAreaElement).form?.requestSubmit();
            }
          }}
        />
        <span class="muted small">Enter logs in.</span>
        <button type="submit" disabled={!token.trim()}>
          Log in
        </button>
      </form>
    </div>
  );
}

function EnvBar({ env, page }: { env: string; page: string }) {
  const envs = usePoll(() => api.get<{ data: Environment[] }>("/api/v2/environment"), [], 10000);
  const current = usePoll(() => api.get<{ data: Environment }>(`/api/v2/environment/${env}`), [env], 3000);
  const act = useAction();
  const e = current.data?.data;
  const halted = !!e?.halted;
  return (
    <div class="envbar">
      <select
        aria-label="environment"
        value={env}
        onChange={(ev) => navigate(href(page || "dashboard", { env: (ev.target as HTMLSelectElement).value }))}
      >
        {!envs.data && <option value={env}>{env}</option>}
        {envs.data?.data.map((x) => (
          <option key={x.id} value={x.id}>
            {x.name}
          </option>
        ))}
      </select>
      <nav>
        {kEnvPages.map(([p, label]) => (
          <a key={p} href={href(p, { env })} class={page.split("/")[0] === p ? "active" : ""}>
            {label}
          </a>
        ))}
      </nav>
      {e && (
        <button
          class={halted ? "resume" : "stop"}
          disabled={act.busy}
          onClick={() =>
            act.run(async () => {
              await api.post(`/api/v2/actions/environment/${halted ? "resume" : "halt"}`, env);
              current.reload();
            })
          }
        >
          {halted ? "Resume" : "STOP"}
        </button>
      )}
      {halted && <span class="halted-flag">environment halted</span>}
      <ErrorBanner error={act.error ?? current.error} onClose={act.error ? act.clear : undefined} />
    </div>
  );
}

function App() {
  const route = useRoute();
  const [authNeeded, setAuthNeeded] = useState("");
  useEffect(() => setUnauthorizedHandler((msg) => setAuthNeeded(msg || "401 Unauthorized")), []);
  useEffect(() => {
    document.title = `Inmanta console${route.page ? ` · ${route.page}` : ""}`;
  }, [route.page]);
  const env = route.params.get("env") ?? "";
  if (route.page === "login" || authNeeded) {
    const next = route.page === "login" ? route.params.get("next") ?? "" : location.pathname + location.search;
    return (
<Login next={next} reason={authNeeded} onDone={() => setAuthNeeded("")} />
    );
  }
  let body;
  const page = route.page;
  const needsEnv = page !== "";
  if (needsEnv && !env) {
    body = (
      <ErrorBanner error={`This page needs an environment: open it from the landing page or add ?env=<environment id> to the address.`} />
    );
  } else if (page === "") body = <Home />;
  else if (page === "dashboard") body = <Dashboard env={env} />;
  else if (page === "settings") body = <Settings env={env} />;
  else if (page === "desiredstate") body = <DesiredState env={env} />;
  else if (page === "desiredstate/compare")
    body = <Compare env={env} from={route.params.get("from") ?? ""} to={route.params.get("to") ?? ""} />;
  else if (page === "resources") body = <Resources env={env} params={route.params} />;
  else if (page === "resources/details") body = <ResourceDetails env={env} rid={route.params.get("rid") ?? ""} tab={route.params.get("tab") ?? "attributes"} />;
  else if (page === "graph") body = <Graph env={env} version={route.params.get("version") ?? ""} focus={route.params.get("focus") ?? ""} />;
  else if (page === "dryrun") body = <Dryrun env={env} version={route.params.get("version") ?? ""} id={route.params.get("id") ?? ""} />;
  else if (page === "compilereports") body = <CompileReports env={env} id={route.params.get("id") ?? ""} />;
  else if (page === "agents") body = <Agents env={env} />;
  else body = <ErrorBanner error={`No page at /console/${page}`} />;
  return (
    <div class="app" onClick={onLinkClick as any}>
      <header>
        <a class="brand" href={href("")}>
          Inmanta console
        </a>
        {getToken() && (
          <button
            class="link"
            onClick={() => {
              setToken(null);
              location.reload();
            }}
          >
            log out
          </button>
        )}
      </header>
      {needsEnv && env && <EnvBar env={env} page={page} />}
      <main data-page={page || "home"}>{body}</main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
