// Live data: a fetch repeated every `intervalMs` while the page is visible (polling; docs/console.md says why),
// dropped when its inputs change or the page unmounts, so an old answer never overwrites a newer one.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

export function usePoll<T>(
  fetcher: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  intervalMs = 0,
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const generation = useRef(0);

  useEffect(() => {
    setData(undefined);
    setLoading(true);
    setError(null);
  }, deps);

  useEffect(() => {
    const gen = ++generation.current;
    const ctl = new AbortController();
    let timer: number | undefined;
    const run = async () => {
      try {
        const v = await fetcher(ctl.signal);
        if (gen !== generation.current) return;
        setData(v);
        setError(null);
      } catch (e) {
        if ((e as Error).name === "AbortError" || gen !== generation.current) return;
        setError((e as Error).message);
      } finally {
        if (gen === generation.current) {
          setLoading(false);
          if (intervalMs > 0) timer = window.setTimeout(run, document.hidden ? intervalMs * 4 : intervalMs);
        }
      }
    };
    run();
    return () => {
      ctl.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

// Runs a user action (button): remembers the server's message of a failure so the page can show it.
export function useAction(): {
  busy: boolean;
  error: string | null;
  run: (fn: () => Promise<unknown>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (e) {
      setError((e as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}
