import type { StepDef } from '../definition.ts';
import { render, resolveValue, type StepCtx } from './context.ts';
import { requestOf } from './http.ts';

// What a step is given, as the run page shows it (stored with each attempt, workflow_step_attempts): its
// templates filled from the run's data, or, for steps that read the data whole (code, transform, condition,
// a JSONata loop), that data. Capped, since every attempt stores it.

export const INPUT_MAX_CHARS = 16_000;

/** Header values the page does not repeat: credentials filled from variables belong in no second place. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i;

function resolved(c: StepCtx, s: StepDef): unknown {
  switch (s.type) {
    case 'llm':
    case 'image':
    case 'audio':
    case 'video':
      return {
        model: s.model,
        ...(s.provider ? { provider: s.provider } : {}),
        prompt: render(s.prompt ?? '', c.data),
        ...(s.system ? { system: render(s.system, c.data) } : {}),
      };
    case 'http': {
      const r = requestOf(c, s);
      const headers = Object.fromEntries(
        Object.entries(r.headers).map(([k, v]) => [k, SECRET_HEADER.test(k) ? '[hidden]' : v]),
      );
      return { ...r, headers };
    }
    case 'loop':
      if (s.items?.includes('{{')) return { items: resolveValue(s.items, c.data) };
      return c.data;
    default:
      return c.data;
  }
}

/** The step's input as stored: the value, or `{ truncated, preview }` when its JSON is over the cap. */
export function stepInput(c: StepCtx, s: StepDef): unknown {
  let json: string;
  try {
    json = JSON.stringify(resolved(c, s)) ?? 'null';
  } catch (err) {
    return { error: `The input could not be shown: ${(err as Error).message}` };
  }
  if (json.length <= INPUT_MAX_CHARS) return JSON.parse(json);
  return { truncated: true, bytes: Buffer.byteLength(json), preview: json.slice(0, INPUT_MAX_CHARS) };
}
