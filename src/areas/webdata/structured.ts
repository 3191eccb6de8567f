import { Ajv, type ValidateFunction } from 'ajv';
import { extractHeuristic, type JsonSchema } from '../../core/ai/heuristic-extract.ts';
import type { Deps } from '../../deps.ts';
import { PageFailure } from './fetch-page.ts';

// Schema mode: the page's markdown goes to TEXT_MODEL with structured output; the answer is validated
// against the caller's JSON schema with ajv and, on a mismatch, asked for once more with the validation
// errors in the prompt. With no TEXT_MODEL configured the heuristic extractor (JSON-LD, meta tags,
// label/value pairs) answers instead; `extractedBy` says which.

export type Structured = {
  data: Record<string, unknown>;
  extractedBy: 'model' | 'heuristic';
  tokens: number;
};

/** What `auto` mode extracts when no schema is given. */
export const AUTO_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    title: { type: 'string', description: 'The title of the page' },
    description: { type: 'string', description: 'One or two sentences saying what the page is about' },
    author: { type: 'string' },
    date: { type: 'string', description: 'Publication date, ISO 8601 when known' },
    price: { type: 'number' },
    currency: { type: 'string' },
  },
};

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

/** Compiles a caller's schema once; a schema ajv cannot compile is the caller's mistake. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const hit = compiled.get(schema);
  if (hit) return hit;
  const fn = ajv.compile(schema);
  compiled.set(schema, fn);
  return fn;
}

export function schemaProblem(schema: Record<string, unknown>): string | null {
  try {
    ajv.compile(schema);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

export async function extractStructured(
  deps: Deps,
  input: { html: string; markdown: string; schema: JsonSchema; prompt?: string; signal?: AbortSignal },
): Promise<Structured> {
  const model = deps.config.models.textModel;
  if (!model) {
    return { data: extractHeuristic(input.html, input.schema), extractedBy: 'heuristic', tokens: 0 };
  }
  const validate = compileSchema(input.schema as Record<string, unknown>);
  const system =
    'Extract the requested data from the web page below. Answer only with data found on the page; ' +
    `leave out fields the page does not give. ${input.prompt ?? ''}`.trim();
  let prompt = input.markdown.slice(0, 60_000);
  let tokens = 0;
  for (let attempt = 0; attempt < 2; attempt++) {
    let res: Awaited<ReturnType<Deps['models']['generateObject']>>;
    try {
      res = await deps.models.generateObject({
        model,
        schema: input.schema,
        schemaName: 'extraction',
        system,
        prompt,
        abortSignal: input.signal,
      });
    } catch (err) {
      throw new PageFailure(`The model could not extract the data: ${(err as Error).message}`);
    }
    tokens += res.usage.totalTokens;
    if (validate(res.object))
      return { data: res.object as Record<string, unknown>, extractedBy: 'model', tokens };
    const problems = ajv.errorsText(validate.errors);
    prompt = `${prompt}\n\nYour previous answer did not match the schema (${problems}). Answer again.`;
    if (attempt === 1)
      throw new PageFailure(`The model's answer did not match the schema twice: ${problems}.`);
  }
  throw new PageFailure('The model did not answer.');
}
