// Environment settings: every known setting with its type, default and documentation; edit or reset one.
import { useState } from "preact/hooks";
import { api, seg } from "../api";
import { ErrorBanner, Loading, Section } from "../components/Common";
import { useAction, usePoll } from "../hooks";

interface Definition {
  name?: string;
  type: string;
  default: unknown;
  doc?: string;
  allowed_values?: string[];
  recompile?: boolean;
  agent_restart?: boolean;
}
interface SettingsPayload {
  settings: Record<string, unknown>;
  definition: Record<string, Definition>;
}

function parse(type: string, raw: string): unknown {
  switch (type) {
    case "bool":
      return raw === "true";
    case "int": {
      if (!/^-?\d+$/.test(raw.trim())) throw new Error(`'${raw}' is not an integer`);
      return parseInt(raw, 10);
    }
    case "positive_float": {
      const f = Number(raw);
      if (raw.trim() === "" || isNaN(f) || f < 0) throw new Error(`'${raw}' is not a positive number`);
      return f;
    }
    case "dict": {
      let v: unknown;
      try {
        v = JSON.parse(raw);
      } catch (e) {
        throw new Error(`not valid JSON: ${(e as Error).message}`);
      }
      if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("a dict setting needs a JSON object");
      return v;
    }
    default:
      return raw;
  }
}

const show = (v: unknown) => (typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));

function SettingRow({ env, name, def, value, onDone }: { env: string; name: string; def: Definition; value: unknown; onDone: () => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const act = useAction();
  const current = draft ?? (def.type === "dict" ? JSON.stringify(value ?? {}, null, 1) : show(value ?? def.default));
  const save = () =>
    act.run(async () => {
      const v = parse(def.type, current);
      await api.post(`/api/v2/environment_settings/${seg(name)}`, env, { value: v });
      setDraft(null);
      onDone();
    });
  let input;
  if (def.type === "bool")
    input = (
      <select value={current} onChange={(e) => setDraft((e.target as HTMLSelectElement).value)}>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  else if (def.type === "enum")
    input = (
      <select value={current} onChange={(e) => setDraft((e.target as HTMLSelectElement).value)}>
        {(def.allowed_values ?? []).map((v) => (
          <option key={v}>{v}</option>
        ))}
      </select>
    );
  else if (def.type === "dict") input = <textarea rows={2} value={current} onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)} />;
  else input = <input value={current} onInput={(e) => setDraft((e.target as HTMLInputElement).value)} />;
  return (
    <tr data-setting={name}>
      <td>
        <code>{name}</code>
        <div class="muted small">{def.doc}</div>
      </td>
      <td>
        <span class="type">{def.type}</span>
      </td>
      <td class="muted">{show(def.default)}</td>
      <td>
        {input}
        <ErrorBanner error={act.error} onClose={act.clear} />
      </td>
      <td class="actions">
        <button disabled={act.busy || draft === null} onClick={save}>
          Save
        </button>
        <button
          disabled={act.busy}
          onClick={() =>
            act.run(async () => {
              await api.del(`/api/v2/environment_settings/${seg(name)}`, env);
              setDraft(null);
              onDone();
            })
          }
        >
          Reset
        </button>
      </td>
    </tr>
  );
}

export function Settings({ env }: { env: string }) {
  const s = usePoll(() => api.get<{ data: SettingsPayload }>("/api/v2/environment_settings", env), [env]);
  const d = s.data?.data;
  return (
    <Section title="Environment settings">
      <ErrorBanner error={s.error} />
      <Loading when={s.loading && !d} />
      {d && (
        <table class="table settings">
          <thead>
            <tr>
              <th>Setting</th>
              <th>Type</th>
              <th>Default</th>
              <th>Value</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {Object.keys(d.definition)
              .sort()
              .map((k) => (
                <SettingRow key={k} env={env} name={k} def={d.definition[k]} value={d.settings[k]} onDone={s.reload} />
              ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
