// End-to-end test of the console in a real Chromium (Debian's /usr/bin/chromium, driven by playwright-core; no
// browser download), against a running server given by --url (test/console/run_e2e.py starts the real
// `inmanta server` + PostgreSQL and passes it). Without --url it starts e2e/fake-api.mjs and says so loudly.
// Each step is one test; the run ends with "N passed, N failed, N skipped" and exits non-zero on any failure.
// Options: --url URL  --backend NAME (printed)  --skip step=reason (repeatable)  --shots DIR (screenshots)
//          --artifacts DIR (v1.json, v2.json from `inmanta export -j`; default: exported here with build/bin/inmanta)
//          --big N (resources in the big environment, default 100000; 0 skips it)
//          --inmanta BIN (export the test project with `BIN export -e … --server_address …`; else PUT /api/v1/version)
//          --repo PATH (a git repo of the test project, branch main: the environment's repository, so Recompile
//          compiles a real commit)
import { chromium } from "playwright-core";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : dflt; };
const skips = new Map();
args.forEach((a, i) => { if (a === "--skip") { const [k, ...r] = args[i + 1].split("="); skips.set(k, r.join("=")); } });
const shots = path.resolve(opt("shots", path.join(root, "docs", "console")));
const bigN = Number(opt("big", 100000));
fs.mkdirSync(shots, { recursive: true });

let fake = null;
let base = opt("url", "");
let backend = opt("backend", "real inmanta server");
if (!base) {
  backend = "FAKE API (e2e/fake-api.mjs): no server URL given";
  fake = spawn(process.execPath, [path.join(here, "fake-api.mjs"), "0"], { stdio: ["ignore", "pipe", "inherit"] });
  base = await new Promise((res, rej) => {
    fake.stdout.on("data", (d) => { const m = /listening (\d+)/.exec(String(d)); if (m) res(`http://127.0.0.1:${m[1]}`); });
    fake.on("exit", (c) => rej(new Error(`fake api exited with ${c}`)));
  });
}
process.on("exit", () => fake?.kill("SIGTERM"));
console.log(`console e2e: backend ${backend} at ${base}`);

// ---- REST helpers (the test's own view of the server, to check what the UI did) ----------------------------------
async function rest(method, p, env, body) {
  const headers = { Accept: "application/json" };
  if (env) headers["X-Inmanta-tid"] = env;
  let data;
  if (body !== undefined) {
    data = zlib.gzipSync(Buffer.from(JSON.stringify(body)));
    headers["Content-Type"] = "application/json";
    headers["Content-Encoding"] = "gzip";
  }
  const r = await fetch(base + p, { method, headers, body: data });
  const text = await r.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = text; }
  return { status: r.status, json };
}
async function restOk(method, p, env, body) {
  const r = await rest(method, p, env, body);
  if (r.status !== 200) throw new Error(`${method} ${p} -> ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

// put_version payload from an `inmanta export -j` artifact, as 11.5.5's exporter sends it (spec §3.4, §18).
function putVersionPayload(artifact, version, message) {
  const resourceState = {};
  const resources = artifact.resources.map((r) => {
    const { undefined: undef, version: _v, ...rest } = r;
    const id = r.id.replace(/,v=\d+$/, "");
    resourceState[id] = undef ? "undefined" : "available";
    return { ...rest, id: `${id},v=${version}`, version, requires: (r.requires ?? []).map((x) => `${x.replace(/,v=\d+$/, "")},v=${version}`) };
  });
  return {
    version, resources, resource_state: resourceState, unknowns: [], resource_sets: artifact.resource_sets ?? {},
    version_info: { export_metadata: { message, type: "api" } }, compiler_version: "console-e2e",
  };
}
async function exportVersion(env, artifact, message) {
  const v = (await restOk("POST", "/api/v2/reserve_version", env, {})).data;
  for (const [hash, content] of Object.entries(artifact.files ?? {}))
    await restOk("PUT", `/api/v1/file/${hash}`, null, { id: hash, content: Buffer.from(content).toString("base64") });
  await restOk("PUT", "/api/v1/version", env, putVersionPayload(artifact, v, message));
  return v;
}
// The real exporter pushing to the server (`inmanta export -e … --server_address … --server_port …`), when the
// wrapper names the binary (--inmanta); returns the version it committed.
function cliExport(env, mainFile, message) {
  const bin = opt("inmanta", "");
  const u = new URL(base);
  const out = execFileSync(bin, ["export", "-f", mainFile, "-e", env, "--server_address", u.hostname, "--server_port", u.port,
    "-m", JSON.stringify({ message, type: "api" })], { cwd: path.join(root, "test", "console", "project"), encoding: "utf8", stdio: "pipe" });
  const m = /Committed resources with version (\d+)/.exec(out);
  if (!m) throw new Error(`inmanta export did not commit a version: ${out}`);
  return Number(m[1]);
}

function artifacts() {
  const dir = opt("artifacts", "");
  if (dir) return [1, 2].map((n) => JSON.parse(fs.readFileSync(path.join(dir, `v${n}.json`), "utf8")));
  const proj = path.join(root, "test", "console", "project");
  const bin = path.join(root, process.env.BUILD_DIR ?? "build", "bin", "inmanta");
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "console-e2e-"));
  execFileSync(bin, ["export", "-j", path.join(out, "v1.json")], { cwd: proj, stdio: "pipe" });
  execFileSync(bin, ["export", "-f", "v2.cf", "-j", path.join(out, "v2.json")], { cwd: proj, stdio: "pipe" });
  return [1, 2].map((n) => JSON.parse(fs.readFileSync(path.join(out, `v${n}.json`), "utf8")));
}

// ---- browser ------------------------------------------------------------------------------------------------------
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "console-chromium-"));
const context = await chromium.launchPersistentContext(userDir, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1360, height: 860 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const page = context.pages()[0] ?? (await context.newPage());
page.on("dialog", (d) => d.accept());
page.setDefaultTimeout(15000);
const consoleErrors = [];
page.on("pageerror", (e) => consoleErrors.push(String(e)));

const results = [];
// Thrown by a step when the backend demonstrably did not do its part (checked through the REST API, not the page).
class BackendNotReady extends Error {}
const state = {};
const metrics = {};
async function step(name, fn, { needs = [] } = {}) {
  const skip = [name, ...needs].find((k) => skips.has(k));
  if (skip !== undefined) {
    results.push({ name, status: "skipped", why: skips.get(skip) });
    console.log(`SKIP ${name}: ${skips.get(skip)}`);
    return;
  }
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, status: "passed" });
    console.log(`PASS ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    if (e instanceof BackendNotReady) {
      results.push({ name, status: "skipped", why: e.message });
      console.log(`SKIP ${name}: ${e.message}`);
      return;
    }
    results.push({ name, status: "failed" });
    console.log(`FAIL ${name}: ${e.message.split("\n").slice(0, 6).join("\n   ")}`);
    await page.screenshot({ path: path.join(os.tmpdir(), `console-e2e-fail-${name}.png`) }).catch(() => {});
  }
}
let lastShot = Date.now();
const shot = async (name) => {
  await page.screenshot({ path: path.join(shots, `${name}.png`) });
  if (process.env.INM_E2E_TRACE) console.log(`  shot ${name} +${Date.now() - lastShot} ms`);
  lastShot = Date.now();
};
const go = (p) => page.goto(base + p);
const expect = (cond, msg) => { if (!cond) throw new Error(msg); };
async function waitFor(fn, what, timeout = 30000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}

const [v1Artifact, v2Artifact] = artifacts();

await step("create environment", async () => {
  await go("/console/");
  await page.waitForSelector('[data-testid="create-env"]');
  const form = page.locator('[data-testid="create-env"]');
  await form.locator('input[name="project_name"]').fill("e2e");
  await form.locator('input[name="name"]').fill("dev");
  await form.locator('input[name="description"]').fill("created by the console e2e test");
  if (opt("repo", "")) {
    await form.locator('input[name="repository"]').fill(opt("repo", ""));
    await form.locator('input[name="branch"]').fill("main");
  }
  await form.locator('button[type="submit"]').click();
  const link = page.locator('tr[data-env="dev"] a').first();
  await link.waitFor();
  const href = await link.getAttribute("href");
  state.env = new URL(href, base).searchParams.get("env");
  const envs = (await restOk("GET", "/api/v2/environment")).data;
  expect(envs.some((e) => e.id === state.env && e.name === "dev"), `the server does not list environment ${state.env}`);
  await shot("landing");
});

await step("settings: edit a typed setting", async () => {
  await go(`/console/settings?env=${state.env}`);
  const row = page.locator('tr[data-setting="auto_deploy"]');
  await row.waitFor();
  expect((await row.locator(".type").textContent()) === "bool", "auto_deploy is not shown as a bool");
  await row.locator("select").selectOption("false");
  await row.getByRole("button", { name: "Save" }).click();
  await waitFor(async () => (await restOk("GET", "/api/v2/environment_settings", state.env)).data.settings.auto_deploy === false, "auto_deploy=false on the server");
  // A value the server refuses: its message is shown.
  const keep = page.locator('tr[data-setting="available_versions_to_keep"]');
  await keep.locator("input").fill("12");
  await keep.getByRole("button", { name: "Save" }).click();
  await waitFor(async () => (await restOk("GET", "/api/v2/environment_settings", state.env)).data.settings.available_versions_to_keep === 12, "available_versions_to_keep=12");
  await shot("settings");
});

await step("export two versions and release the first from the desired-state page", async () => {
  if (opt("inmanta", "")) {
    state.v1 = cliExport(state.env, "main.cf", "first rollout");
    state.v2 = cliExport(state.env, "v2.cf", "drop legacy, add app-4");
  } else {
    state.v1 = await exportVersion(state.env, v1Artifact, "first rollout");
    state.v2 = await exportVersion(state.env, v2Artifact, "drop legacy, add app-4");
  }
  await go(`/console/desiredstate?env=${state.env}`);
  const row1 = page.locator(`tr[data-version="${state.v1}"]`);
  await row1.waitFor();
  expect((await row1.getAttribute("data-status")) === "candidate", `version ${state.v1} is not a candidate before release`);
  await row1.getByRole("button", { name: "Promote" }).click();
  await page.locator(`tr[data-version="${state.v1}"][data-released="true"]`).waitFor({ timeout: 30000 });
  const listed = (await restOk("GET", "/api/v2/desiredstate", state.env)).data.find((v) => v.version === state.v1);
  expect(listed.released !== false && listed.status !== "skipped_candidate", `the server does not list version ${state.v1} as released: ${JSON.stringify(listed)}`);
  // With a scheduler the released version becomes the active one.
  if (!skips.has("deploy")) await page.locator(`tr[data-version="${state.v1}"][data-status="active"]`).waitFor({ timeout: 60000 });
  await shot("desiredstate");
});

await step("failed request shows the server's message", async () => {
  // Deleting the active (latest released) version is refused by the server; the page shows its message.
  await page.locator(`tr[data-version="${state.v1}"]`).getByRole("button", { name: "Delete" }).click();
  const banner = page.locator('[data-testid="error"]').first();
  await banner.waitFor();
  const text = await banner.textContent();
  const srv = await rest("DELETE", `/api/v1/version/${state.v1}`, state.env);
  expect(srv.status >= 400, `deleting the active version answered ${srv.status}`);
  expect(text.includes(srv.json.message), `banner "${text}" does not show the server's message "${srv.json.message}"`);
  await shot("error-message");
}, { needs: [] });

await step("resources reach deployed (live, no reload)", async () => {
  await go(`/console/resources?env=${state.env}`);
  await page.locator('[data-testid="summary"]').waitFor();
  const deployed = () => page.evaluate(() => {
    const el = document.querySelector('.legend-item[data-state="deployed"]');
    const failed = document.querySelector('.legend-item[data-state="failed"]');
    return { deployed: el ? parseInt(el.textContent.replace(/\D+/g, " ").trim().split(" ").pop(), 10) : 0, failed: failed ? 1 : 0 };
  });
  const total = v1Artifact.resources.length;
  await waitFor(async () => { const d = await deployed(); return d.deployed === total - 1 && d.failed ? d : null; }, `${total - 1} deployed and 1 failed in the summary bar`, 90000);
  await shot("resources");
}, { needs: ["deploy", "resources"] });

await step("resources: server-side filter and sort", async () => {
  await go(`/console/resources?env=${state.env}&agent=lab2&sort=resource_id_value.desc`);
  await page.locator('[data-testid="resource-table"] .vbody .vrow').first().waitFor();
  const values = await page.locator('[data-testid="resource-table"] .vbody .c-resource_id_value').allTextContents();
  const expected = v1Artifact.resources.filter((r) => r.id.includes("[lab2,")).map((r) => /name=([^\]]+)/.exec(r.id)[1]).sort().reverse();
  expect(JSON.stringify(values) === JSON.stringify(expected), `rows ${JSON.stringify(values)} are not ${JSON.stringify(expected)}`);
}, { needs: ["resources"] });

await step("failed resource: read its log", async () => {
  await go(`/console/resources?env=${state.env}&status=failed`);
  const link = page.locator('[data-testid="resource-table"] .vbody .c-resource_id_value a').first();
  await link.waitFor();
  expect((await link.textContent()) === "db-backup", `the failed resource is ${await link.textContent()}`);
  await link.click();
  await page.locator(".facts-line").waitFor();
  await shot("resource-details");
  await page.getByRole("tab", { name: "logs" }).click();
  await page.locator('[data-testid="logs"] tr[data-level="ERROR"]').first().waitFor({ timeout: 30000 });
  const kw = page.locator('[data-testid="logs"] tr[data-level="ERROR"] details.kwargs').first();
  if (await kw.count()) await kw.locator("summary").click();
  await shot("resource-logs");
  await page.getByRole("tab", { name: "requires" }).click();
  await page.locator('[data-testid="requires"]').waitFor();
}, { needs: ["deploy", "resources"] });

await step("diff between two versions", async () => {
  await go(`/console/desiredstate?env=${state.env}`);
  await page.getByLabel(`pick version ${state.v1}`).check();
  await page.getByLabel(`pick version ${state.v2}`).check();
  await page.locator('[data-testid="compare"]').click();
  await page.locator('[data-testid="diff"]').waitFor();
  const rid = (n) => `std::testing::NullResource[lab2,name=${n}]`;
  await page.locator(`.res-diff[data-resource="${rid("legacy")}"] .diff-status.st-deleted`).waitFor();
  await page.locator(`.res-diff[data-resource="${rid("app-4")}"] .diff-status.st-added`).waitFor();
  await page.locator(`.res-diff[data-resource="std::testing::NullResource[lab1,name=cache]"] .attr-diff[data-attr="send_event"]`).waitFor();
  // The file's content changed: the unified diff of the two contents is shown under its hash.
  const cd = page.locator(`.res-diff[data-resource="std::File[lab1,path=/tmp/inmanta-console-e2e-motd]"] .attr-diff[data-attr="hash"] [data-testid="content-diff"]`);
  await cd.waitFor();
  const dels = await cd.locator(".del").allTextContents(), adds = await cd.locator(".add").allTextContents();
  expect(JSON.stringify(dels) === JSON.stringify(["-rollout: first"]) && JSON.stringify(adds) === JSON.stringify(["+rollout: second"]),
    `content diff lines are -${JSON.stringify(dels)} +${JSON.stringify(adds)}, not "-rollout: first" / "+rollout: second"`);
  expect((await cd.locator(".hdr").count()) === 2 && (await cd.locator(".hunk").count()) === 1, "the content diff has no ---/+++ header or @@ hunk line");
  expect(page.url().includes(`/console/desiredstate/compare?env=${state.env}&from=${state.v1}&to=${state.v2}`), `compare is not a deep link: ${page.url()}`);
  await shot("diff");
});

await step("dependency graph of a version", async () => {
  await go(`/console/graph?env=${state.env}&version=${state.v1}`);
  const info = page.locator('[data-testid="graph-info"]');
  await info.waitFor();
  await waitFor(async () => (await info.getAttribute("data-layout-ms")) !== "", "the graph layout");
  expect(Number(await info.getAttribute("data-nodes")) === v1Artifact.resources.length, "graph node count");
  expect(await page.locator('[data-testid="graph"] canvas').count() > 0, "no canvas drawn");
  await page.waitForTimeout(300);
  await shot("graph");
});

await step("dry run: request, watch progress, view the diff", async () => {
  const dv = opt("dryrun-version", "") === "1" ? state.v1 : state.v2;
  await go(`/console/dryrun?env=${state.env}&version=${dv}`);
  await page.locator('[data-testid="request-dryrun"]').click();
  await page.locator('[data-testid="dryrun-progress"]').waitFor();
  try {
    await page.locator('[data-testid="dryrun-progress"][data-done="true"]').waitFor({ timeout: 90000 });
  } catch (e) {
    const id = new URL(page.url()).searchParams.get("id");
    const list = (await restOk("GET", `/api/v2/dryrun/${dv}`, state.env)).data;
    const run = list.find((d) => d.id === id);
    if (run && run.todo === run.total)
      throw new BackendNotReady(`the server's own dry-run row stayed at todo ${run.todo}/${run.total} for 90 s: the scheduler did not run it (backend, not console)`);
    throw e;
  }
  await page.locator('[data-testid="diff"]').waitFor();
  if (dv === state.v2) {
    // Version 1's file is on disk; version 2 changes one line of it: the dry run shows the content diff.
    const cd = page.locator(`.res-diff[data-resource="std::File[lab1,path=/tmp/inmanta-console-e2e-motd]"] [data-testid="content-diff"]`);
    await cd.waitFor();
    const text = (await cd.locator("div").allTextContents()).join("\n");
    expect(text.includes("--- current") && text.includes("-rollout: first") && text.includes("+rollout: second"),
      `the dry run's content diff is not current -> desired: ${text}`);
  }
  await shot("dryrun");
}, { needs: ["dryrun", "deploy"] });

await step("compile reports: recompile", async () => {
  await go(`/console/compilereports?env=${state.env}`);
  await page.locator('[data-testid="recompile"]').click();
  const badge = page.locator('tr[data-compile] [data-testid="compile-state"]').first();
  await badge.waitFor({ timeout: 30000 });
  // The state badge is a link to that compile's report; the commit column shows the server's metadata.commit.
  const compiles = (await restOk("GET", "/api/v2/compilereport", state.env)).data;
  const rowId = await page.locator("tr[data-compile]").first().getAttribute("data-compile");
  const c = compiles.find((x) => x.id === rowId);
  expect(c, `the page lists compile ${rowId}, the server does not`);
  const link = new URL(await badge.getAttribute("href"), base);
  expect(link.pathname === "/console/compilereports" && link.searchParams.get("id") === rowId && link.searchParams.get("env") === state.env,
    `the state badge links to ${link}, not to compile ${rowId}`);
  await badge.click();
  await page.locator('[data-testid="compile-detail"] .cstate').waitFor();
  expect((await page.locator('[data-testid="compile-detail"] h3').textContent()).includes(rowId), "the badge did not open its report");
  expect(new URL(page.url()).searchParams.get("id") === rowId, `the address ${page.url()} does not name compile ${rowId}`);
  await waitFor(async () => {
    const cs = (await restOk("GET", "/api/v2/compilereport", state.env)).data.find((x) => x.id === rowId);
    return cs && cs.completed ? cs : null;
  }, "the compile to finish", 90000);
  const done = (await restOk("GET", "/api/v2/compilereport", state.env)).data.find((x) => x.id === rowId);
  if (opt("repo", "")) {
    // A compile of the environment's repository: its commit is in the compile list and, once exported, the
    // version it made shows it with the trigger (versions page).
    expect(done.success && done.metadata?.commit && done.version, `the compile of the repository did not export a version: ${JSON.stringify(done)}`);
    await page.locator(`tr[data-compile="${rowId}"] code[data-commit="${done.metadata.commit}"]`).waitFor();
    state.compiledVersion = done.version;
    state.commit = done.metadata.commit;
  }
  // Every timestamp in one format: UTC, YYYY-MM-DD HH:MM:SS UTC.
  const stamps = await page.locator('tr[data-compile] td:first-child a').allTextContents();
  expect(stamps.length && stamps.every((t) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/.test(t)), `timestamps ${JSON.stringify(stamps)}`);
  await page.waitForTimeout(500);
  await shot("compilereports");
  if (state.compiledVersion) {
    await go(`/console/desiredstate?env=${state.env}`);
    const row = page.locator(`tr[data-version="${state.compiledVersion}"]`);
    await row.locator(`code[data-commit="${state.commit}"]`).waitFor();
    expect((await row.locator('[data-testid="trigger"]').textContent()) === "console", "the compiled version's trigger is not console");
    await shot("desiredstate-commit");
  }
}, { needs: ["compile"] });

await step("agents: pause one", async () => {
  await go(`/console/agents?env=${state.env}`);
  const row = page.locator('tr[data-agent="lab2"]');
  await row.waitFor();
  await row.getByRole("button", { name: "Pause" }).click();
  await page.locator('tr[data-agent="lab2"][data-state="paused"]').waitFor();
  const agents = (await restOk("GET", "/api/v2/agents", state.env)).data;
  expect(agents.find((a) => a.name === "lab2")?.paused === true, "lab2 is not paused on the server");
  // The URI column follows autostart_agent_map: the paused lab2 mapped to an ssh target (it deploys nothing
  // while paused) shows that URI, lab1 stays local:. The map is put back afterwards.
  const sshUri = "ssh://deploy@lab2.example.com:2222";
  await restOk("POST", "/api/v2/environment_settings/autostart_agent_map", state.env, { value: { internal: "local:", lab2: sshUri } });
  try {
    await page.locator(`tr[data-agent="lab2"] [data-testid="agent-uri"]:has-text("${sshUri}")`).waitFor({ timeout: 15000 });
    expect((await page.locator('tr[data-agent="lab1"] [data-testid="agent-uri"]').textContent()) === "local:", "lab1's URI is not local:");
    await shot("agents");
  } finally {
    await restOk("POST", "/api/v2/environment_settings/autostart_agent_map", state.env, { value: { internal: "local:" } });
  }
}, { needs: ["agents"] });

await step("dashboard: content matches the server", async () => {
  await go(`/console/dashboard?env=${state.env}`);
  await page.locator('[data-testid="dash-progress"] [data-testid="summary"]').waitFor();
  // Deploy progress by state: the server's deploy_summary (polled until both agree: deploys may still run).
  await waitFor(async () => {
    const srv = (await restOk("GET", "/api/v2/resource?deploy_summary=True&limit=1", state.env)).metadata.deploy_summary;
    const shown = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-testid="dash-progress"] .legend-item')].map((e) => [e.dataset.state, Number(e.dataset.count)])));
    const want = Object.fromEntries(Object.entries(srv.by_state).filter(([, n]) => n > 0));
    return JSON.stringify(shown) === JSON.stringify(want) ? shown : null;
  }, "the progress legend to equal the server's deploy_summary");
  // Last versions: number, state and trigger as the server lists them.
  const ds = (await restOk("GET", "/api/v2/desiredstate?limit=5", state.env)).data;
  const v1 = (await restOk("GET", "/api/v1/version?limit=5", state.env)).versions;
  await waitFor(async () => {
    const rows = await page.evaluate(() => [...document.querySelectorAll('[data-testid="dash-versions"] tr[data-version]')].map((r) => [Number(r.dataset.version), r.dataset.status, r.querySelector('[data-testid="trigger"]').textContent.trim()]));
    const want = ds.map((v) => [v.version, v.status, v1.find((x) => x.version === v.version)?.version_info?.export_metadata?.type ?? ""]);
    return rows.length && JSON.stringify(rows.map((r) => [r[0], r[1], r[2].split(" ")[0]])) === JSON.stringify(want) ? rows : null;
  }, `the versions panel to list ${JSON.stringify(ds.map((v) => [v.version, v.status]))} with their triggers`);
  if (state.compiledVersion)
    await page.locator(`[data-testid="dash-versions"] tr[data-version="${state.compiledVersion}"] code[data-commit="${state.commit}"]`).waitFor();
  // The last compile and its result.
  const compiles = skips.has("compile") ? [] : (await restOk("GET", "/api/v2/compilereport?limit=10", state.env)).data;
  if (compiles.length) {
    const c = page.locator('[data-testid="dash-compile"] [data-compile]');
    await c.waitFor();
    expect((await c.getAttribute("data-compile")) === compiles[0].id, `the dashboard's last compile is ${await c.getAttribute("data-compile")}, the server's ${compiles[0].id}`);
    const stateOf = (x) => (!x.started ? "queued" : !x.completed ? "running" : x.success ? "success" : "failed");
    await waitFor(async () => {
      const srv = (await restOk("GET", "/api/v2/compilereport?limit=1", state.env)).data[0];
      return stateOf(srv) === (await c.getAttribute("data-state")) ? true : null;
    }, "the last compile's state to equal the server's");
    expect((await c.locator("a.cstate").getAttribute("href")).includes(`id=${compiles[0].id}`), "the last compile does not link to its report");
  }
  // Agents: up/down/paused counts as the server reports them (lab2 was paused above).
  if (!skips.has("agents")) {
    const agents = (await restOk("GET", "/api/v2/agents", state.env)).data.filter((a) => a.name !== "$__scheduler");
    for (const s of ["up", "down", "paused"]) {
      const n = agents.filter((a) => a.status === s).length;
      await page.locator(`[data-testid="dash-agents"] [data-count-${s}="${n}"]`).waitFor();
    }
    await page.locator('[data-testid="dash-agents"] tr[data-agent="lab2"][data-state="paused"]').waitFor();
  }
  // Recent failures: the server's failed resources, each linking to its log.
  const failed = skips.has("resources") ? [] : (await restOk("GET", "/api/v2/resource?filter.status=failed&limit=10", state.env)).data;
  for (const f of failed) {
    const a = page.locator(`[data-testid="dash-failures"] tr[data-failed="${f.resource_id}"] a`);
    await a.waitFor();
    const u = new URL(await a.getAttribute("href"), base);
    expect(u.pathname === "/console/resources/details" && u.searchParams.get("rid") === f.resource_id, `failure link ${u}`);
  }
  if (!skips.has("deploy")) expect(failed.some((f) => f.resource_id.includes("db-backup")), "the server lists no failed db-backup");
  await shot("dashboard");
  if (failed.length) {
    await page.locator(`[data-testid="dash-failures"] tr[data-failed="${failed[0].resource_id}"] a`).click();
    await page.locator('[data-testid="logs"]').waitFor();
  }
});

// A synthetic version of n resources on `agents` agents: within an agent a tree of fan-out 3 (so a few layers, many
// rows), every 17th resource also requires one of another agent, and every 7th has a long name.
const synthId = (i, agents) => `std::testing::NullResource[host-${i % agents},name=${i % 7 === 3 ? `a-rather-long-resource-name-${i}` : `r${i}`}]`;
function synthResources(n, agents) {
  const rid = (i) => synthId(i, agents);
  const resources = [];
  for (let i = 0; i < n; i++) {
    const j = Math.floor(i / agents);
    const requires = [];
    if (j > 0) requires.push(rid(Math.floor((j - 1) / 3) * agents + (i % agents)));
    if (i % 17 === 0 && i > 0) requires.push(rid(i - 1));
    const name = /name=([^\]]+)/.exec(rid(i))[1];
    resources.push({ id: `${rid(i)},v=0`, name, agentname: `host-${i % agents}`, fail: false, managed: true, purged: false, purge_on_delete: false, send_event: true, requires, undefined: false });
  }
  return resources;
}
async function synthEnvironment(name, n, agents) {
  const proj = (await restOk("GET", "/api/v2/project")).data.find((p) => p.name === "e2e");
  const env = (await restOk("PUT", "/api/v2/environment", null, { project_id: proj.id, name })).data.id;
  await restOk("POST", "/api/v2/actions/environment/halt", env, {}); // nothing deploys on the test machine
  const version = await exportVersion(env, { resources: synthResources(n, agents), resource_sets: {} }, `${n} synthetic resources`);
  await rest("POST", `/api/v2/desiredstate/${version}/promote`, env, {});
  return { env, version };
}
// Boxes (node + label) of every resource node exactly where the canvas view drew them; the pairs that overlap.
const overlapCheck = () => page.evaluate(() => {
  const boxes = window.__inmGraph.view.labelBoxes();
  boxes.sort((a, b) => a.x1 - b.x1);
  const bad = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length && boxes[j].x1 < boxes[i].x2; j++)
      if (boxes[j].y1 < boxes[i].y2 && boxes[i].y1 < boxes[j].y2) bad.push([boxes[i].id, boxes[j].id]);
  return { n: boxes.length, bad: bad.slice(0, 5), nbad: bad.length, noLabel: boxes.filter((b) => !(b.lw > 5)).length };
});

await step("graph at 1,000 nodes: layered, grouped by agent, no two labels overlapping, focus", async () => {
  const { env, version } = await synthEnvironment("graph-1k", 1000, 5);
  const g0 = Date.now();
  await go(`/console/graph?env=${env}&version=${version}`);
  const info = page.locator('[data-testid="graph-info"]');
  await waitFor(async () => (await info.count()) && (await info.getAttribute("data-layout-ms")) !== "" ? true : null, "the 1,000-node layout", 60000);
  metrics.graph_1000_total_ms = Date.now() - g0;
  metrics.graph_1000_layout_and_draw_ms = Number(await info.getAttribute("data-layout-ms"));
  metrics.graph_1000_layout_ms = Number(await info.getAttribute("data-layout-only-ms"));
  const r = await overlapCheck();
  expect(r.n === 1000, `${r.n} resource nodes drawn, expected 1000`);
  expect(r.noLabel === 0, `${r.noLabel} nodes have no label box`);
  expect(r.nbad === 0, `${r.nbad} pairs of node+label boxes overlap, e.g. ${JSON.stringify(r.bad)}`);
  expect(await page.evaluate(() => window.__inmGraph.bands) === 5, "not one band per agent");
  // Every requirement is left of what requires it (layered).
  const backwards = await page.evaluate(() => { const g = window.__inmGraph; return g.edges.filter(([a, b]) => g.pos.get(a).x >= g.pos.get(b).x).length; });
  expect(backwards === 0, `${backwards} edges point right-to-left`);
  await page.waitForTimeout(300);
  await shot("graph-1000");
  // Search and focus: the resource and its neighbours stay, the rest fades; the address names the focus.
  const target = "std::testing::NullResource[host-2,name=r57]";
  await page.locator('input[name="search"]').fill("host-2,name=r57]");
  await page.locator('input[name="search"]').press("Enter");
  await page.locator(`[data-testid="graph-focus"][data-focus="${target}"]`).waitFor();
  expect(new URL(page.url()).searchParams.get("focus") === target, `focus not in the address: ${page.url()}`);
  const f = await page.evaluate((t) => {
    const g = window.__inmGraph;
    const nb = new Set([t]);
    for (const [a, b] of g.edges) { if (a === t) nb.add(b); if (b === t) nb.add(a); }
    const ids = [...g.pos.keys()];
    return { near: nb.size, faded: [...nb].filter((x) => g.view.faded(x)).length, others: ids.filter((x) => g.view.faded(x)).length, zoom: g.view.view().zoom };
  }, target);
  expect(f.near > 1 && f.faded === 0 && f.others === 1000 - f.near, `focus: ${JSON.stringify(f)}`);
  await page.waitForTimeout(300);
  await shot("graph-1000-focus");
});

await step("every page at 100 and at 10,000 resources (screenshots)", async () => {
  for (const [n, agents, tag] of [[100, 4, "100"], [10000, 20, "10k"]]) {
    const t0 = Date.now();
    const { env, version } = await synthEnvironment(`scale-${tag}`, n, agents);
    if (process.env.INM_E2E_TRACE) console.log(`  set-up of ${n} resources: ${Date.now() - t0} ms`);
    lastShot = Date.now();
    await go(`/console/dashboard?env=${env}`);
    await page.locator(`[data-testid="dash-progress"] .summary-legend b`).waitFor({ timeout: 60000 });
    expect((await page.locator(`[data-testid="dash-progress"] .summary-legend b`).textContent()) === String(n), `dashboard total is not ${n}`);
    await page.locator('[data-testid="dash-versions"] tr[data-version]').first().waitFor({ timeout: 60000 });
    await page.waitForTimeout(300);
    await shot(`scale-${tag}-dashboard`);
    await go(`/console/resources?env=${env}`);
    await page.locator('[data-testid="resource-table"] .vbody .vrow').first().waitFor({ timeout: 60000 });
    await shot(`scale-${tag}-resources`);
    await go(`/console/desiredstate?env=${env}`);
    await page.locator(`tr[data-version="${version}"]`).waitFor({ timeout: 60000 });
    await shot(`scale-${tag}-desiredstate`);
    const g0 = Date.now();
    await go(`/console/graph?env=${env}&version=${version}`);
    const info = page.locator('[data-testid="graph-info"]');
    await waitFor(async () => (await info.count()) && (await info.getAttribute("data-layout-ms")) !== "" ? true : null, `the ${n}-node layout`, 90000);
    if (n >= 10000) {
      metrics.graph_10k_total_ms = Date.now() - g0;
      metrics.graph_10k_layout_and_draw_ms = Number(await info.getAttribute("data-layout-ms"));
      metrics.graph_10k_layout_ms = Number(await info.getAttribute("data-layout-only-ms"));
    }
    expect(Number(await info.getAttribute("data-nodes")) === n, `graph has ${await info.getAttribute("data-nodes")} nodes`);
    await page.waitForTimeout(300);
    await shot(`scale-${tag}-graph`);
    const focus = synthId(agents * 4 + 1, agents);
    await page.locator('input[name="search"]').fill(focus);
    await page.locator('input[name="search"]').press("Enter");
    await page.locator(`[data-testid="graph-focus"][data-focus="${focus}"]`).waitFor({ timeout: 60000 });
    await page.waitForTimeout(400);
    await shot(`scale-${tag}-graph-focus`);
    await go(`/console/agents?env=${env}`);
    await page.locator("tr[data-agent]").first().waitFor({ timeout: 60000 });
    await shot(`scale-${tag}-agents`);
    await go(`/console/compilereports?env=${env}`);
    await page.locator(".section-head h2").waitFor({ timeout: 60000 });
    await page.waitForTimeout(300);
    await shot(`scale-${tag}-compilereports`);
    await go(`/console/settings?env=${env}`);
    await page.locator("tr[data-setting]").first().waitFor({ timeout: 60000 });
    await shot(`scale-${tag}-settings`);
  }
}, { needs: ["resources"] });

await step(`big environment (${bigN} resources): first render and a filtered page`, async () => {
  if (bigN <= 0) throw new BackendNotReady("--big 0");
  const proj = (await restOk("GET", "/api/v2/project")).data.find((p) => p.name === "e2e");
  const env = (await restOk("PUT", "/api/v2/environment", null, { project_id: proj.id, name: "big" })).data.id;
  // Halted: the console reads the 100k rows; nothing should deploy them on the test machine.
  await restOk("POST", "/api/v2/actions/environment/halt", env, {});
  const agents = 50;
  const resources = [];
  for (let i = 0; i < bigN; i++) {
    const agent = `host-${i % agents}`;
    resources.push({ id: `std::testing::NullResource[${agent},name=r${i}],v=0`, name: `r${i}`, agentname: agent, fail: false, managed: true, purged: false, purge_on_delete: false, send_event: true, requires: i % 1000 ? [resources[i - 1].id.replace(/,v=0$/, "")] : [], undefined: false });
  }
  const t0 = Date.now();
  state.bigV = await exportVersion(env, { resources, resource_sets: {} }, `${bigN} resources`);
  metrics.put_version_ms = Date.now() - t0;
  // Released explicitly (auto_deploy may already have done it: a 409 "already released" is fine).
  await rest("POST", `/api/v2/desiredstate/${state.bigV}/promote`, env, {});
  // First render: navigation until the first table row is drawn.
  const n0 = Date.now();
  await go(`/console/resources?env=${env}`);
  await page.locator('[data-testid="resource-table"] .vbody .vrow').first().waitFor({ timeout: 120000 }); // a loaded 2-core CI box answers 100k pages in 20-30 s
  metrics.first_render_ms = Date.now() - n0;
  await page.locator('[data-testid="summary"]').waitFor();
  const total = await page.evaluate(() => document.querySelector('[data-testid="pager"] span')?.textContent);
  expect(total.includes(String(bigN)), `pager says "${total}", expected ${bigN} resources`);
  await shot("resources-100k");
  // Filtered page: type a value filter, until the pager shows the filtered total.
  const f0 = Date.now();
  const needle = `r${Math.floor(bigN / 2) + 1}`;
  await page.locator('input[name="value"]').fill(needle);
  await page.locator('input[name="value"]').press("Enter");
  await waitFor(async () => {
    const s = await page.evaluate(() => document.querySelector('[data-testid="pager"] span')?.textContent ?? "");
    const m = / of (\d+)$/.exec(s.trim());
    return m && Number(m[1]) > 0 && Number(m[1]) < 100 ? s : null;
  }, "the filtered page", 60000);
  metrics.filtered_page_ms = Date.now() - f0;
  const values = await page.locator('[data-testid="resource-table"] .vbody .c-resource_id_value').allTextContents();
  expect(values.length > 0 && values.every((v) => v.includes(needle)), `filtered rows ${JSON.stringify(values.slice(0, 5))}`);
  // The same two requests timed without the browser: how much of the above is the server's answer.
  let a0 = Date.now();
  await restOk("GET", "/api/v2/resource?limit=100&sort=resource_type.asc&deploy_summary=True", env);
  metrics.api_first_page_ms = Date.now() - a0;
  a0 = Date.now();
  await restOk("GET", `/api/v2/resource?limit=100&sort=resource_type.asc&deploy_summary=True&filter.resource_id_value=${needle}`, env);
  metrics.api_filtered_page_ms = Date.now() - a0;
  // A 1,000-row page stays responsive: virtualised, only a window of rows is in the DOM.
  const p0 = Date.now();
  await go(`/console/resources?env=${env}&limit=1000&sort=agent.desc`);
  await page.locator('[data-testid="resource-table"] .vbody .vrow').first().waitFor({ timeout: 120000 }); // a loaded 2-core CI box answers 100k pages in 20-30 s
  metrics.page_1000_rows_ms = Date.now() - p0;
  metrics.rows_in_dom_of_1000 = await page.locator('[data-testid="resource-table"] .vbody .vrow').count();
  expect(metrics.rows_in_dom_of_1000 < 100, `${metrics.rows_in_dom_of_1000} rows in the DOM for a 1,000-row page`);
}, { needs: ["big", "resources"] });

await step("auth: the login form takes a token, Enter submits it", async () => {
  let authUrl = opt("auth-url", "");
  let token = opt("auth-token", "");
  let authFake = null;
  if (!authUrl && fake) {
    token = "e2e-secret-token";
    authFake = spawn(process.execPath, [path.join(here, "fake-api.mjs"), "0", "--token", token], { stdio: ["ignore", "pipe", "inherit"] });
    authUrl = await new Promise((res) => authFake.stdout.on("data", (d) => { const m = /listening (\d+)/.exec(String(d)); if (m) res(`http://127.0.0.1:${m[1]}`); }));
  }
  try {
    const bare = await fetch(`${authUrl}/api/v2/project`);
    expect(bare.status === 401, `the auth server answered ${bare.status} without a token`);
    await page.goto(`${authUrl}/console/`);
    await page.locator('[data-testid="login"]').waitFor();
    await page.locator('textarea[name="token"]').fill("not-a-valid-token");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.locator('[data-testid="login"] [data-testid="error"]').waitFor();
    expect((await page.locator('[data-testid="login"] [data-testid="error"]').textContent()).includes("refused"), "a bad token is not reported");
    await shot("login");
    // Enter submits the form (no click).
    await page.locator('textarea[name="token"]').fill(token);
    await page.locator('textarea[name="token"]').press("Enter");
    await page.locator('[data-testid="create-env"]').waitFor();
    await page.waitForTimeout(500);
    expect(await page.locator('[data-testid="login"]').count() === 0, "still on the login form with a valid token");
    expect(await page.evaluate(() => sessionStorage.getItem("inmanta.token")) === token, "the token is not kept in sessionStorage");
  } finally {
    authFake?.kill("SIGTERM");
  }
}, { needs: ["auth"] });

await step("no uncaught errors in the page", async () => {
  expect(consoleErrors.length === 0, `page errors: ${consoleErrors.join(" | ")}`);
});

await context.close();
fs.rmSync(userDir, { recursive: true, force: true });
if (fake) fake.kill("SIGTERM");

const n = (s) => results.filter((r) => r.status === s).length;
if (Object.keys(metrics).length) console.log(`metrics: ${JSON.stringify(metrics)}`);
fs.writeFileSync(path.join(shots, "last-run.json"), JSON.stringify({ backend, results, metrics }, null, 1) + "\n");
console.log(`${n("passed")} passed, ${n("failed")} failed, ${n("skipped")} skipped`);
process.exit(n("failed") ? 1 : 0);
