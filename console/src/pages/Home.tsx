// Landing page: projects with their environments; create a project or an environment; halt and resume.
import { useState } from "preact/hooks";
import { api, type Environment, type Project } from "../api";
import { ErrorBanner, Loading, Section } from "../components/Common";
import { useAction, usePoll } from "../hooks";
import { href } from "../router";

function CreateEnvironment({ projects, onDone }: { projects: Project[]; onDone: () => void }) {
  const [projectId, setProjectId] = useState("");
  const [newProject, setNewProject] = useState("");
  const [name, setName] = useState("");
  const [repo, setRepo] = useState("");
  const [branch, setBranch] = useState("");
  const [description, setDescription] = useState("");
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    act.run(async () => {
      let pid = projectId;
      if (!pid) {
        const created = await api.put<{ data: Project }>("/api/v2/project", null, { name: newProject });
        pid = created.data.id;
      }
      const body: Record<string, string> = { project_id: pid, name };
      if (repo) body.repository = repo;
      if (branch) body.branch = branch;
      if (description) body.description = description;
      await api.put("/api/v2/environment", null, body);
      setName("");
      onDone();
    });
  };
  return (
    <form class="card form" onSubmit={submit} data-testid="create-env">
      <h3>Create environment</h3>
      <label>
        Project
        <select name="project" value={projectId} onChange={(e) => setProjectId((e.target as HTMLSelectElement).value)}>
          <option value="">new project…</option>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      {!projectId && (
        <label>
          New project name
          <input name="project_name" value={newProject} onInput={(e) => setNewProject((e.target as HTMLInputElement).value)} />
        </label>
      )}
      <label>
        Environment name
        <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Repository (optional)
        <input name="repository" value={repo} onInput={(e) => setRepo((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Branch (optional)
        <input name="branch" value={branch} onInput={(e) => setBranch((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Description (optional)
        <input name="description" value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" disabled={act.busy || !name || (!projectId && !newProject)}>
        Create
      </button>
      <ErrorBanner error={act.error} onClose={act.clear} />
    </form>
  );
}

export function Home() {
  const projects = usePoll(() => api.get<{ data: Project[] }>("/api/v2/project"), [], 5000);
  const envs = usePoll(() => api.get<{ data: Environment[] }>("/api/v2/environment"), [], 5000);
  const act = useAction();
  const byProject = new Map<string, Environment[]>();
  for (const e of envs.data?.data ?? []) {
    const pid = e.project_id ?? e.project ?? "";
    byProject.set(pid, [...(byProject.get(pid) ?? []), e]);
  }
  const reload = () => {
    projects.reload();
    envs.reload();
  };
  const plist = projects.data?.data ?? [];
  return (
    <div class="home">
      <Section title="Projects and environments">
        <ErrorBanner error={projects.error ?? envs.error} />
        <ErrorBanner error={act.error} onClose={act.clear} />
        <Loading when={projects.loading && !projects.data} />
        {plist.length === 0 && projects.data && <div class="muted">No projects yet: create an environment below.</div>}
        {plist.map((p) => (
          <div class="card project" key={p.id} data-project={p.name}>
            <h3>{p.name}</h3>
            <table class="table">
              <thead>
                <tr>
                  <th>Environment</th>
                  <th>Repository</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {(byProject.get(p.id) ?? []).map((e) => (
                  <tr key={e.id} data-env={e.name}>
                    <td>
                      <a href={href("dashboard", { env: e.id })}>{e.name}</a>
                      <div class="muted small">{e.id}</div>
                    </td>
                    <td>
                      {e.repo_url} {e.repo_branch && <span class="muted">({e.repo_branch})</span>}
                    </td>
                    <td>{e.halted ? <span class="halted-flag">halted</span> : "running"}</td>
                    <td class="actions">
                      <a href={href("resources", { env: e.id })}>resources</a>
                      <a href={href("desiredstate", { env: e.id })}>versions</a>
                      <a href={href("compilereports", { env: e.id })}>compiles</a>
                      <a href={href("settings", { env: e.id })}>settings</a>
                      <button
                        disabled={act.busy}
                        onClick={() =>
                          act.run(async () => {
                            await api.post(`/api/v2/actions/environment/${e.halted ? "resume" : "halt"}`, e.id);
                            reload();
                          })
                        }
                      >
                        {e.halted ? "Resume" : "Halt"}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      </Section>
      <CreateEnvironment projects={plist} onDone={reload} />
    </div>
  );
}
