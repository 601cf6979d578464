// A stand-in for `inmanta server`, for developing the console without a built server: it serves console/dist at
// /console (index.html for unknown paths) and answers the API calls the console makes, in the reference's
// payload shapes (spec §13/§18), from memory. Deploys are simulated (a resource with `fail: true` fails and logs
// a traceback; agents can be paused), dry runs count down, compiles run three fake stages.
// It is NOT the server under test: the end-to-end suite (run.mjs) targets the real server whenever one is built,
// and says so in its output when it falls back to this.
// Usage: node e2e/fake-api.mjs [port]   (prints "listening <port>")
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import crypto from "node:crypto";
import { fileURLToPath } from "node:url";

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist");
const uuid = () => crypto.randomUUID();
const now = () => new Date().toISOString().replace("Z", "");

const projects = [];
const envs = new Map(); // id -> env state
const kDefinitions = {
  auto_deploy: { type: "bool", default: true, doc: "When this boolean is set to true, the orchestrator will automatically release a new version" },
  autostart_agent_deploy_interval: { type: "str", default: "600", doc: "The deploy interval of the scheduler (seconds or cron)" },
  autostart_agent_repair_interval: { type: "str", default: "86400", doc: "The repair interval of the scheduler (seconds or cron)" },
  autostart_on_start: { type: "bool", default: true, doc: "Automatically start the scheduler when the server starts" },
  server_compile: { type: "bool", default: true, doc: "Allow the server to compile the model" },
  auto_full_compile: { type: "str", default: "", doc: "Cron expression for periodic full compiles" },
  recompile_backoff: { type: "positive_float", default: 0.1, doc: "Minimum gap between compiles (seconds)" },
  available_versions_to_keep: { type: "int", default: 100, doc: "Versions kept by the cleanup job" },
  resource_action_logs_retention: { type: "int", default: 7, doc: "Days to keep resource action logs" },
  protected_environment: { type: "bool", default: false, doc: "Refuse to clear or delete this environment" },
  notification_retention: { type: "int", default: 365, doc: "Days to keep notifications" },
};

function newEnv(body) {
  return {
    id: body.environment_id || uuid(), name: body.name, project_id: body.project_id, repo_url: body.repository || "",
    repo_branch: body.branch || "", description: body.description || "", halted: false, settings: {},
    lastVersion: 0, versions: new Map(), active: 0, rps: new Map(), agents: new Map(), dryruns: [], compiles: [], logs: new Map(),
  };
}

class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}
const need = (cond, status, msg) => { if (!cond) throw new HttpError(status, msg); };

function parseRid(id) {
  const m = /^(([\w-]+(?:::[\w-]+)*)::([\w-]+))\[([^,]+),([^=]+)=([^\]]+)\](?:,v=(\d+))?$/.exec(id);
  need(m, 400, `invalid resource id ${id}`);
  return { id: id.replace(/,v=\d+$/, ""), type: m[1], agent: m[4], attr: m[5], value: m[6] };
}

function status(env, rid) {
  const s = env.rps.get(rid);
  if (!s) return "available";
  if (s.orphaned) return "orphaned";
  if (s.deploying) return "deploying";
  return s.status;
}

function compareString(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v, null, 4);
  if (typeof v === "boolean") return v ? "True" : "False";
  return String(v);
}

function diffResources(from, to) {
  const a = new Map(from.map((r) => [r.resource_id, r])), b = new Map(to.map((r) => [r.resource_id, r]));
  const out = [];
  for (const id of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(id), y = b.get(id);
    const ax = x ? { ...x.attributes, requires: [...x.requires].sort() } : {}, ay = y ? { ...y.attributes, requires: [...y.requires].sort() } : {};
    const attrs = {};
    for (const k of new Set([...Object.keys(ax), ...Object.keys(ay)])) {
      const fc = x ? compareString(ax[k]) : "", tc = y ? compareString(ay[k]) : "";
      if (fc !== tc || !x || !y) attrs[k] = { from_value: ax[k] ?? null, to_value: ay[k] ?? null, from_value_compare: fc, to_value_compare: tc };
    }
    const st = !x ? "added" : !y ? "deleted" : Object.keys(attrs).length ? "modified" : "unmodified";
    if (st !== "unmodified") out.push({ resource_id: id, status: st, attributes: st === "unmodified" ? {} : attrs });
  }
  return out.sort((p, q) => (p.resource_id < q.resource_id ? -1 : 1));
}

function log(env, rid, action, level, msg, kwargs = {}) {
  if (!env.logs.has(rid)) env.logs.set(rid, []);
  const actionId = uuid();
  env.logs.get(rid).unshift({ action_id: actionId, action, timestamp: now(), level, msg, args: [], kwargs });
}

function versionStatus(env, v) {
  if (v.version === env.active) return "active";
  if (v.version > env.active) return "candidate";
  return v.released ? "retired" : "skipped_candidate";
}

function release(env, version) {
  const v = env.versions.get(version);
  need(v, 404, `version ${version} does not exist`);
  need(!v.released, 409, `version ${version} is already released`);
  need(version > env.active, 409, `version ${version} is older than the latest released version ${env.active}`);
  v.released = true;
  env.active = version;
  const seen = new Set();
  const big = v.resources.length > 5000;
  for (const r of v.resources) {
    seen.add(r.resource_id);
    const old = env.rps.get(r.resource_id);
    if (!old || old.hash !== r.hash || old.orphaned) {
      env.rps.set(r.resource_id, { status: big ? ["deployed", "deployed", "deployed", "failed", "skipped"][r.n % 5] : "available", hash: r.hash, deploying: false, last: null, fail: !!r.attributes.fail, requires: r.requires, agent: r.agent });
    } else Object.assign(old, { requires: r.requires, fail: !!r.attributes.fail });
  }
  for (const [rid, s] of env.rps) if (!seen.has(rid)) s.orphaned = true;
  for (const a of new Set(v.resources.map((r) => r.agent))) if (!env.agents.has(a)) env.agents.set(a, { paused: false });
}

// One simulated scheduler step per environment: deploying -> result, available (deps settled) -> deploying.
function tick() {
  for (const env of envs.values()) {
    if (env.halted || env.rps.size > 5000) continue;
    for (const [rid, s] of env.rps) {
      if (s.orphaned || !s.deploying) continue;
      s.deploying = false;
      s.last = now();
      const failedDep = s.requires.find((d) => ["failed", "skipped"].includes(env.rps.get(d)?.status));
      if (s.fail) {
        s.status = "failed";
        log(env, rid, "deploy", "ERROR", `An error occurred during deployment of ${rid} (exception: Exception('Failed on request'))`, {
          traceback: "Traceback (most recent call last):\n  File \"handler.py\", line 42, in execute\n    raise Exception('Failed on request')\nException: Failed on request",
          exception: "Exception('Failed on request')",
        });
      } else if (failedDep) {
        s.status = "skipped";
        log(env, rid, "deploy", "INFO", `Resource ${rid} skipped because a dependency failed`, { failed_dependencies: [failedDep] });
      } else {
        s.status = "deployed";
        log(env, rid, "deploy", "INFO", `End run for resource ${rid}`, { change: "nochange", status: "deployed" });
      }
    }
    for (const [rid, s] of env.rps) {
      if (s.orphaned || s.deploying || s.status !== "available" || env.agents.get(s.agent)?.paused) continue;
      if (s.requires.some((d) => ["available", "deploying"].includes(status(env, d)))) continue;
      s.deploying = true;
      log(env, rid, "deploy", "INFO", `Start run because a new version was released`, { reason: "new version", agent: s.agent });
    }
    for (const d of env.dryruns) if (d.todo > 0) d.todo = Math.max(0, d.todo - 3);
    for (const c of env.compiles) {
      if (!c.started) { c.started = now(); continue; }
      if (!c.completed) {
        const names = ["Init", "Pulling updates", "Recompiling configuration model"];
        c.reports.push({ id: uuid(), name: names[c.reports.length], command: c.reports.length === 2 ? `inmanta -vvv export -X -e ${env.id}` : "", started: now(), completed: now(), returncode: 0, outstream: `${names[c.reports.length]} done\n`, errstream: "" });
        if (c.reports.length === 3) { c.completed = now(); c.success = true; }
      }
    }
  }
}
setInterval(tick, 400).unref();

function paged(items, q, basePath, mapper = (x) => x) {
  const limit = Math.min(Number(q.get("limit") ?? 20), 1000);
  const offset = Number(q.get("_offset") ?? 0);
  const page = items.slice(offset, offset + limit).map(mapper);
  const link = (o) => { const p = new URLSearchParams(q); p.set("_offset", String(o)); return `${basePath}?${p}`; };
  const links = { self: link(offset), first: link(0), last: link(Math.max(0, Math.floor((items.length - 1) / limit) * limit)) };
  if (offset + limit < items.length) links.next = link(offset + limit);
  if (offset > 0) links.prev = link(Math.max(0, offset - limit));
  return { data: page, links, metadata: { total: items.length, before: offset, after: Math.max(0, items.length - offset - page.length), page_size: limit } };
}

function latestResources(env) {
  const v = env.versions.get(env.active);
  return v ? v.resources : [];
}

function route(method, parts, q, body, headers) {
  const tid = headers["x-inmanta-tid"];
  const envOf = () => { need(tid, 400, "this call needs the X-Inmanta-tid header"); const e = envs.get(tid); need(e, 404, `environment ${tid} not found`); return e; };
  const p = parts.join("/");
  // projects / environments
  if (p === "v2/project" && method === "GET") return { data: projects.map((x) => ({ ...x, environments: [...envs.values()].filter((e) => e.project_id === x.id).map((e) => ({ id: e.id, name: e.name })) })) };
  if (p === "v2/project" && method === "PUT") { need(body.name, 400, "a project needs a name"); need(!projects.find((x) => x.name === body.name), 500, `A project with name ${body.name} already exists.`); const pr = { id: uuid(), name: body.name }; projects.push(pr); return { data: pr }; }
  const envView = (e) => ({ id: e.id, name: e.name, project_id: e.project_id, repo_url: e.repo_url, repo_branch: e.repo_branch, description: e.description, halted: e.halted, settings: e.settings });
  if (p === "v2/environment" && method === "GET") return { data: [...envs.values()].map(envView) };
  if (p === "v2/environment" && method === "PUT") {
    need(projects.find((x) => x.id === body.project_id), 400, `project ${body.project_id} does not exist`);
    need(body.name, 400, "an environment needs a name");
    need(![...envs.values()].find((e) => e.project_id === body.project_id && e.name === body.name), 500, `Project with id=${body.project_id} already has an environment with name ${body.name}`);
    const e = newEnv(body); envs.set(e.id, e); return { data: envView(e) };
  }
  if (parts[0] === "v2" && parts[1] === "environment" && parts.length === 3 && method === "GET") { const e = envs.get(parts[2]); need(e, 404, `environment ${parts[2]} not found`); return { data: envView(e) }; }
  if (p === "v2/actions/environment/halt") { const e = envOf(); e.halted = true; for (const a of e.agents.values()) { a.unpause_on_resume = !a.paused; a.paused = true; } return {}; }
  if (p === "v2/actions/environment/resume") { const e = envOf(); e.halted = false; for (const a of e.agents.values()) { if (a.unpause_on_resume) a.paused = false; a.unpause_on_resume = null; } return {}; }
  // settings
  if (p === "v2/environment_settings" && method === "GET") { const e = envOf(); const settings = {}; for (const k in kDefinitions) settings[k] = k in e.settings ? e.settings[k] : kDefinitions[k].default; return { data: { settings, definition: Object.fromEntries(Object.entries(kDefinitions).map(([k, d]) => [k, { name: k, ...d }])) } }; }
  if (parts[0] === "v2" && parts[1] === "environment_settings" && parts.length === 3) {
    const e = envOf(); const d = kDefinitions[parts[2]]; need(d, 404, `${parts[2]} is not a valid setting`);
    if (method === "DELETE") { delete e.settings[parts[2]]; return {}; }
    let v = body.value;
    if (d.type === "int") { need(Number.isInteger(Number(v)), 400, `${parts[2]}: '${v}' is not an int`); v = Number(v); }
    if (d.type === "bool") { need([true, false, "true", "false"].includes(v), 400, `${parts[2]}: '${v}' is not a bool`); v = v === true || v === "true"; }
    if (d.type === "positive_float") { need(Number(v) >= 0, 400, `${parts[2]}: '${v}' is not a positive float`); v = Number(v); }
    e.settings[parts[2]] = v; return {};
  }
  // versions
  if (p === "v2/reserve_version") { const e = envOf(); return { data: ++e.lastVersion }; }
  if (p === "v1/file" && method === "POST") return { files: [] };
  if (parts[0] === "v1" && parts[1] === "file" && method === "PUT") return {};
  if (p === "v1/version" && method === "PUT") {
    const e = envOf(); const n = Number(body.version);
    need(n > 0 && n <= e.lastVersion, 400, `version ${n} was not reserved`); need(!e.versions.has(n), 500, `version ${n} is already defined`);
    const resources = body.resources.map((r, i) => {
      const id = parseRid(r.id); const attributes = { ...r }; delete attributes.id; delete attributes.version;
      const requires = (r.requires ?? []).map((x) => x.replace(/,v=\d+$/, "")); delete attributes.requires;
      return { resource_id: id.id, resource_type: id.type, agent: id.agent, id_attribute: id.attr, resource_id_value: id.value, attributes, requires, hash: JSON.stringify(attributes), n: i };
    });
    const md = body.version_info?.export_metadata ?? {};
    e.versions.set(n, { version: n, date: now(), released: false, resources, md, labels: md.type ? [{ name: md.type, message: md.message ?? "" }] : [] });
    if (e.settings.auto_deploy ?? true) release(e, n);
    return {};
  }
  if (parts[0] === "v2" && parts[1] === "desiredstate" && parts[3] === "promote") { release(envOf(), Number(parts[2])); return {}; }
  if (parts[0] === "v1" && parts[1] === "version" && parts.length === 3 && method === "POST") { release(envOf(), Number(parts[2])); return {}; }
  if (parts[0] === "v1" && parts[1] === "version" && parts.length === 3 && method === "DELETE") { const e = envOf(); const n = Number(parts[2]); need(e.versions.has(n), 404, `version ${n} does not exist`); need(n !== e.active, 400, `version ${n} is the latest released version and cannot be deleted`); e.versions.delete(n); return {}; }
  if (p === "v1/version" && method === "GET") { const e = envOf(); const vs = [...e.versions.values()].sort((a, b) => b.version - a.version).slice(0, Number(q.get("limit") ?? 1000)); return { versions: vs.map((v) => ({ version: v.version, date: v.date, released: v.released, total: v.resources.length, done: 0, result: v.released ? "deploying" : "pending", version_info: { export_metadata: v.md } })), count: e.versions.size }; }
  if (p === "v2/desiredstate" && method === "GET") { const e = envOf(); const vs = [...e.versions.values()].sort((a, b) => b.version - a.version); return paged(vs, q, "/api/v2/desiredstate", (v) => ({ version: v.version, date: v.date, total: v.resources.length, labels: v.labels, status: versionStatus(e, v), released: v.released })); }
  if (parts[0] === "v2" && parts[1] === "desiredstate" && parts[2] === "diff") { const e = envOf(); const a = e.versions.get(Number(parts[3])), b = e.versions.get(Number(parts[4])); need(a && b, 404, `version ${a ? parts[4] : parts[3]} does not exist`); need(Number(parts[3]) < Number(parts[4]), 400, "the first version must be older than the second"); return { data: diffResources(a.resources, b.resources) }; }
  if (parts[0] === "v2" && parts[1] === "desiredstate" && parts.length === 3) { const e = envOf(); const v = e.versions.get(Number(parts[2])); need(v, 404, `version ${parts[2]} does not exist`); return paged(v.resources, q, `/api/v2/desiredstate/${parts[2]}`, (r) => ({ resource_id: r.resource_id, resource_version_id: `${r.resource_id},v=${v.version}`, id_details: { resource_type: r.resource_type, agent: r.agent, attribute: r.id_attribute, resource_id_value: r.resource_id_value }, resource_set: null, status: status(e, r.resource_id), requires: r.requires })); }
  // resources
  if (p === "v2/resource" && method === "GET") {
    const e = envOf(); let rs = latestResources(e);
    const summary = { total: rs.length, by_state: {} };
    for (const r of rs) { const s = status(e, r.resource_id); summary.by_state[s] = (summary.by_state[s] ?? 0) + 1; }
    const f = (k) => q.getAll(`filter.${k}`);
    for (const k of ["resource_type", "agent", "resource_id_value"]) { const vals = f(k); if (vals.length) rs = rs.filter((r) => vals.some((v) => r[k].includes(v))); }
    if (f("status").length) rs = rs.filter((r) => f("status").includes(status(e, r.resource_id)));
    const [field, dir] = (q.get("sort") ?? "resource_type.asc").split(".");
    need(["resource_type", "agent", "resource_id_value", "status"].includes(field), 400, `Invalid sort field ${field}`);
    const key = (r) => (field === "status" ? status(e, r.resource_id) : r[field]);
    rs = [...rs].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.resource_id < b.resource_id ? -1 : 1) * (dir === "desc" ? -1 : 1));
    const out = paged(rs, q, "/api/v2/resource", (r) => ({ resource_id: r.resource_id, resource_version_id: `${r.resource_id},v=${e.active}`, id_details: { resource_type: r.resource_type, agent: r.agent, attribute: r.id_attribute, resource_id_value: r.resource_id_value }, status: status(e, r.resource_id), requires: r.requires }));
    if (q.get("deploy_summary") === "True") out.metadata.deploy_summary = summary;
    return out;
  }
  if (parts[0] === "v2" && parts[1] === "resource" && parts.length >= 3) {
    const e = envOf(); const rid = parts[2]; const r = latestResources(e).find((x) => x.resource_id === rid); need(r, 404, `resource ${rid} not found`);
    if (parts[3] === "logs") {
      let ls = e.logs.get(rid) ?? [];
      const lvl = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];
      if (q.get("filter.minimal_log_level")) ls = ls.filter((l) => lvl.indexOf(l.level) >= lvl.indexOf(q.get("filter.minimal_log_level")));
      if (q.get("filter.action")) ls = ls.filter((l) => l.action === q.get("filter.action"));
      if (q.get("filter.message")) ls = ls.filter((l) => l.msg.includes(q.get("filter.message")));
      return paged(ls, q, `/api/v2/resource/${encodeURIComponent(rid)}/logs`);
    }
    if (parts[3] === "history") { const hist = [...e.versions.values()].map((v) => ({ v, r: v.resources.find((x) => x.resource_id === rid) })).filter((x) => x.r); const out = []; for (const { v, r: x } of hist) if (!out.length || out[out.length - 1].attribute_hash !== x.hash.length + ":" + x.hash.slice(0, 40)) out.push({ resource_id: rid, date: v.date, attribute_hash: x.hash.length + ":" + x.hash.slice(0, 40), attributes: x.attributes, requires: x.requires }); return { data: out.reverse() }; }
    if (parts[3] === "facts") return { data: [] };
    const s = e.rps.get(rid);
    return { data: { resource_id: rid, resource_type: r.resource_type, agent: r.agent, id_attribute: r.id_attribute, resource_id_value: r.resource_id_value, status: status(e, rid), last_deploy: s?.last ?? null, first_generated_version: 1, attributes: r.attributes, requires_status: Object.fromEntries(r.requires.map((d) => [d, status(e, d)])) } };
  }
  if (p === "v1/deploy") { const e = envOf(); need(e.active, 404, "nothing has been released in this environment"); for (const s of e.rps.values()) if ((body.agent_trigger_method ?? "push_full_deploy") === "push_full_deploy" || s.status !== "deployed") if (!body.agents || body.agents.includes(s.agent)) if (!s.orphaned) s.status = "available"; return {}; }
  // agents
  if (p === "v2/agents") { const e = envOf(); return paged([["$__scheduler", { paused: e.halted }], ...e.agents].map(([name, a]) => ({ name, environment: e.id, paused: a.paused, unpause_on_resume: a.unpause_on_resume ?? null, last_failover: null, status: a.paused ? "paused" : e.halted ? "down" : "up" })), q, "/api/v2/agents"); }
  if (parts[0] === "v2" && parts[1] === "agents" && parts.length === 3) { const e = envOf(); for (const a of e.agents.values()) a.paused = parts[2] === "pause"; return {}; }
  if (parts[0] === "v2" && parts[1] === "agent" && parts.length === 4) { const e = envOf(); const a = e.agents.get(parts[2]); need(a, 404, `agent ${parts[2]} does not exist`); need(["pause", "unpause"].includes(parts[3]), 400, `unknown agent action ${parts[3]}`); a.paused = parts[3] === "pause"; return {}; }
  // dry runs
  if (parts[0] === "v2" && parts[1] === "dryrun" && parts.length === 3 && method === "POST") { const e = envOf(); need(!e.halted, 409, "the environment is halted"); const v = e.versions.get(Number(parts[2])); need(v, 404, `version ${parts[2]} does not exist`); const d = { id: uuid(), environment: e.id, model: v.version, date: now(), total: v.resources.length, todo: v.resources.length, version: v }; e.dryruns.unshift(d); return { data: { id: d.id, environment: e.id, model: v.version, date: d.date, total: d.total, todo: d.todo } }; }
  if (parts[0] === "v2" && parts[1] === "dryrun" && parts.length === 3) { const e = envOf(); return { data: e.dryruns.filter((d) => d.model === Number(parts[2])).map((d) => ({ id: d.id, version: d.model, date: d.date, total: d.total, todo: d.todo })) }; }
  if (parts[0] === "v2" && parts[1] === "dryrun" && parts.length === 4) {
    const e = envOf(); const d = e.dryruns.find((x) => x.id === parts[3]); need(d, 404, `dry run ${parts[3]} does not exist`);
    const done = d.version.resources.slice(0, d.total - d.todo);
    const diff = done.map((r) => r.attributes.fail ? { resource_id: r.resource_id, status: "modified", attributes: { handler: { from_value: "FAILED", to_value: "Failed on request", from_value_compare: "FAILED", to_value_compare: "Failed on request" } } } : status(e, r.resource_id) === "deployed" ? { resource_id: r.resource_id, status: "unmodified", attributes: {} } : { resource_id: r.resource_id, status: "added", attributes: { purged: { from_value: true, to_value: false, from_value_compare: "True", to_value_compare: "False" } } });
    return { data: { summary: { id: d.id, model: d.model, date: d.date, total: d.total, todo: d.todo }, diff } };
  }
  // compiles
  if (parts[0] === "v1" && parts[1] === "notify" && method === "POST") { const e = envs.get(parts[2]); need(e, 404, `environment ${parts[2]} not found`); e.compiles.unshift({ id: uuid(), requested: now(), started: null, completed: null, success: null, do_export: true, force_update: !!body.update, metadata: body.metadata ?? {}, reports: [], version: null }); return {}; }
  if (p === "v2/compilereport") { const e = envOf(); return paged(e.compiles, q, "/api/v2/compilereport", (c) => { const { reports, ...rest } = c; return rest; }); }
  if (parts[0] === "v2" && parts[1] === "compilereport" && parts.length === 3) { const e = envOf(); const c = e.compiles.find((x) => x.id === parts[2]); need(c, 404, `compile ${parts[2]} does not exist`); return { data: c }; }
  if (p === "v2/health" || p === "v1/serverstatus") return { data: { status: "fake" } };
  throw new HttpError(404, `no route ${method} /api/${p}`);
}

const kTypes = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png" };

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  if (url.pathname.startsWith("/console")) {
    let f = path.join(dist, decodeURIComponent(url.pathname.slice("/console".length)));
    if (!f.startsWith(dist) || !fs.existsSync(f) || fs.statSync(f).isDirectory()) f = path.join(dist, "index.html");
    res.writeHead(200, { "Content-Type": kTypes[path.extname(f)] ?? "application/octet-stream" });
    fs.createReadStream(f).pipe(res);
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    let status = 200, out;
    try {
      need(url.pathname.startsWith("/api/"), 404, `no such path ${url.pathname}`);
      if (requiredToken && url.pathname !== "/api/v2/health") {
        const auth = req.headers["authorization"] ?? "";
        need(auth.startsWith("Bearer "), 401, "Authorization header is missing: this server requires a bearer token");
        need(auth.slice(7) === requiredToken, 401, "the bearer token is not valid");
      }
      let raw = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") raw = zlib.gunzipSync(raw);
      let body = {};
      if (raw.length) { try { body = JSON.parse(raw.toString()); } catch { throw new HttpError(400, "the request body is not valid JSON"); } }
      const parts = url.pathname.slice(5).split("/").map(decodeURIComponent);
      out = route(req.method, parts, url.searchParams, body, req.headers);
    } catch (e) {
      status = e.status ?? 500;
      out = { message: e.status ? e.message : `internal error: ${e.message}` };
    }
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(out ?? {}));
  });
});

const port = Number(process.argv[2] ?? 0);
const tokenAt = process.argv.indexOf("--token");
const requiredToken = tokenAt > 0 ? process.argv[tokenAt + 1] : null;
server.listen(port, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
process.on("SIGTERM", () => { server.close(); process.exit(0); });
