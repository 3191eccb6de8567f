import { type JSONSchema7, jsonSchema, type ToolChoice, type ToolSet } from 'ai';
import type { ResolvedModel } from './providers.ts';

// Function tools as the caller declared them (OpenAI's `tools`), turned into the AI SDK's tool set: no
// `execute`, so the SDK stops at the model's tool calls and hands them back to the caller, who runs them.

export type FunctionToolSpec = {
  name: string;
  description?: string;
  /** JSON schema of the arguments; absent means any object. */
  parameters?: JSONSchema7;
  strict?: boolean;
};

export type ToolChoiceSpec = 'auto' | 'none' | 'required' | { name: string };

/** A tool call the model made: `args` is the arguments as a JSON string (OpenAI's `function.arguments`). */
export type ToolCallOut = { id: string; name: string; args: string };

export type ToolRequest = {
  tools?: FunctionToolSpec[];
  toolChoice?: ToolChoiceSpec;
  /** false: at most one call per turn (OpenAI's `parallel_tool_calls`); undefined: the provider's default. */
  parallelToolCalls?: boolean;
};

const ANY_OBJECT: JSONSchema7 = { type: 'object', properties: {} };

export function toolOptions(req: ToolRequest, r: ResolvedModel) {
  if (!req.tools?.length) return {};
  const tools: ToolSet = {};
  for (const t of req.tools)
    tools[t.name] = {
      description: t.description,
      inputSchema: jsonSchema(t.parameters ?? ANY_OBJECT),
      ...(t.strict !== undefined ? { strict: t.strict } : {}),
    };
  const c = req.toolChoice;
  const toolChoice: ToolChoice<ToolSet> | undefined =
    c === undefined || typeof c === 'string' ? c : { type: 'tool', toolName: c.name };
  const p = req.parallelToolCalls;
  // Each provider has its own switch for one-call-per-turn; Google has none (it decides itself).
  const providerOptions =
    p === undefined
      ? {}
      : r.provider === 'anthropic'
        ? { anthropic: { disableParallelToolUse: !p } }
        : {
            openai: { parallelToolCalls: p },
            mistral: { parallelToolCalls: p },
            // The OpenAI-compatible provider copies keys it does not know into the request body as they are.
            pier: { parallel_tool_calls: p },
          };
  return { tools, toolChoice, providerOptions };
}

/** The SDK's parsed tool input back as the JSON string OpenAI's wire format carries. */
export const argsOf = (input: unknown) => (typeof input === 'string' ? input : JSON.stringify(input ?? {}));
