// Client-side routing under /console: pages are chosen by path, their inputs (always `env`) live in the query
// string, so every view is a link that can be shared.
import { useEffect, useState } from "preact/hooks";

export const kBase = "/console";

export interface Route {
  page: string; // path below /console, without leading or trailing slash ("" = landing page)
  params: URLSearchParams;
}

function current(): Route {
  let p = location.pathname;
  if (p.startsWith(kBase)) p = p.slice(kBase.length);
  return { page: p.replace(/^\/+|\/+$/g, ""), params: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => listeners.forEach((l) => l()));

export function href(page: string, params: Record<string, string | number | undefined | null> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return `${kBase}/${page}${s ? `?${s}` : ""}`;
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  listeners.forEach((l) => l());
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const l = () => setRoute(current());
    listeners.add(l);
    return () => {
      listeners.delete(l);
    };
  }, []);
  return route;
}

// Intercepts clicks on in-app links so navigation does not reload the page.
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  const a = (e.target as HTMLElement).closest("a");
  if (!a || a.target || !a.getAttribute("href")?.startsWith(kBase)) return;
  e.preventDefault();
  navigate(a.getAttribute("href")!);
}
