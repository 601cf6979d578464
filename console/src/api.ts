// REST access to the server's API (same origin, /api/v1 and /api/v2). Every request names the environment in
// X-Inmanta-tid when one is given, sends the session's bearer token when there is one, and turns every failed
// answer into an ApiError carrying the server's `message`. GETs are conditional: the last ETag seen for a URL is
// sent as If-None-Match and a 304 answer reuses the cached body, so polling an unchanged page costs no JSON.

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
    public url: string,
  ) {
    super(message);
  }
}

const kTokenKey = "inmanta.token";

export function getToken(): string | null {
  return sessionStorage.getItem(kTokenKey);
}
export function setToken(token: string | null): void {
  if (token) sessionStorage.setItem(kTokenKey, token);
  else sessionStorage.removeItem(kTokenKey);
}

// Called on 401 so the app can show the login form; set by main.tsx.
let onUnauthorized: ((message: string) => void) | null = null;
export function setUnauthorizedHandler(fn: (message: string) => void): void {
  onUnauthorized = fn;
}

interface Cached {
  etag: string;
  body: unknown;
}
const etagCache = new Map<string, Cached>();

export interface RequestOptions {
  env?: string | null;
  body?: unknown;
  signal?: AbortSignal;
}

async function messageOf(resp: Response): Promise<string> {
  const text = await resp.text().catch(() => "");
  if (text) {
    try {
      const parsed = JSON.parse(text);
      if (parsed && typeof parsed.message === "string") return parsed.message;
    } catch {
      // not JSON: fall through to the raw text
    }
    return text.slice(0, 500);
  }
  return `${resp.status} ${resp.statusText || "request failed"}`;
}

export async function request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (opts.env) headers["X-Inmanta-tid"] = opts.env;
  const token = getToken();
  if (token) headers["Authorization"] = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(opts.body);
  }
  const cacheKey = `${opts.env ?? ""} ${path}`;
  const cached = method === "GET" ? etagCache.get(cacheKey) : undefined;
  if (cached) headers["If-None-Match"] = cached.etag;

  let resp: Response;
  try {
    resp = await fetch(path, { method, headers, body, signal: opts.signal, cache: "no-store" });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError(0, `cannot reach the server: ${(e as Error).message}`, path);
  }
  if (resp.status === 304 && cached) return cached.body as T;
  if (!resp.ok) {
    const msg = await messageOf(resp);
    if (resp.status === 401 && onUnauthorized) onUnauthorized(msg);
    throw new ApiError(resp.status, msg, path);
  }
  const text = await resp.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ApiError(resp.status, `the server answered ${path} with something that is not JSON`, path);
    }
  }
  const etag = resp.headers.get("ETag");
  if (method === "GET" && etag) etagCache.set(cacheKey, { etag, body: parsed });
  return parsed as T;
}

export const api = {
  get: <T = any>(path: string, env?: string | null, signal?: AbortSignal) => request<T>("GET", path, { env, signal }),
  post: <T = any>(path: string, env?: string | null, body: unknown = {}) => request<T>("POST", path, { env, body }),
  put: <T = any>(path: string, env?: string | null, body: unknown = {}) => request<T>("PUT", path, { env, body }),
  del: <T = any>(path: string, env?: string | null) => request<T>("DELETE", path, { env }),
};

// Path segments are encoded with nothing left safe (spec §18 rule 5: `/` becomes %2F).
export const seg = (s: string | number) => encodeURIComponent(String(s));

export function query(params: Record<string, string | number | boolean | string[] | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else if (typeof v === "boolean") q.append(k, v ? "True" : "False");
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

// ---- payload shapes (the reference's v2 API) -------------------------------------------------------------------

export interface Project {
  id: string;
  name: string;
  environments?: Environment[];
}
export interface Environment {
  id: string;
  name: string;
  project_id?: string;
  project?: string;
  repo_url?: string;
  repo_branch?: string;
  description?: string;
  halted?: boolean;
  settings?: Record<string, unknown>;
}
export interface Paged<T> {
  data: T[];
  links?: { self?: string; next?: string; prev?: string; first?: string; last?: string };
  metadata?: {
    total?: number;
    before?: number;
    after?: number;
    page_size?: number;
    deploy_summary?: { total: number; by_state: Record<string, number> };
  };
}
export interface ResourceRow {
  resource_id: string;
  status: string;
  resource_version_id?: string;
  // /api/v2/desiredstate/<v> rows carry the id parts here instead of at the top level.
  id_details?: { resource_type: string; agent: string; attribute: string; resource_id_value: string };
  resource_type?: string;
  agent?: string;
  id_attribute?: string;
  resource_id_value?: string;
  requires?: string[];
}
// Resource rows carry their id parts either in `id_details` (the reference's list shapes) or at the top level.
export function idParts(r: ResourceRow): { resource_type: string; agent: string; resource_id_value: string } {
  return r.id_details ?? { resource_type: r.resource_type ?? "", agent: r.agent ?? "", resource_id_value: r.resource_id_value ?? "" };
}

export interface AttrDiff {
  from_value?: unknown;
  to_value?: unknown;
  from_value_compare: string;
  to_value_compare: string;
  // A file-like attribute (`hash`) whose contents the server has: their unified diff (docs/server.md "Content
  // diffs"), or a one-line note (binary, too large, content missing).
  diff?: string;
}
export interface ResourceDiff {
  resource_id: string;
  status: string;
  attributes: Record<string, AttrDiff>;
}

// A version as GET /api/v1/version lists it: deploy progress and what exported it (`version_info.export_metadata`:
// `type` is the trigger — api, console, webhook, … —, and compiles by the server add `commit` and `compile_id`).
export interface VersionV1 {
  version: number;
  date: string;
  released: boolean;
  total: number;
  done?: number;
  result?: string;
  version_info?: { export_metadata?: { type?: string; message?: string; commit?: string; compile_id?: string } };
}
export async function versionsV1(env: string, limit: number, signal?: AbortSignal): Promise<Map<number, VersionV1>> {
  const r = await api.get<{ versions: VersionV1[] }>(`/api/v1/version${query({ limit })}`, env, signal);
  return new Map((r.versions ?? []).map((v) => [v.version, v]));
}
