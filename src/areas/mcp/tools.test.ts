import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute, defineV1Routes } from '../../http/v1-kit.ts';
import { manifests } from '../index.ts';
import { defineArea } from '../manifest.ts';
import { DEPLOY_TOOL } from './access.ts';
import { leanSchema } from './lean-schema.ts';
import { checkToolNames, deriveTools, TOOL_NAME_RE, toolName } from './tools.ts';

// Tool names and schemas without a server: the start-up check, and what leanSchema may and may not drop.

describe('tool names', () => {
  it('maps dots to underscores; every derived name matches and the real manifests pass the check', () => {
    expect(toolName('memory.agents.list')).toBe('memory_agents_list');
    const tools = deriveTools(manifests());
    for (const tool of tools) expect(tool.name).toMatch(TOOL_NAME_RE);
    expect(() => checkToolNames(manifests(), [DEPLOY_TOOL])).not.toThrow();
  });

  it('fails loudly when a function takes the name a dotted operation maps to', () => {
    const [mail] = manifests().filter((a) => a.name === 'mail');
    const fn = manifests()
      .flatMap((a) => a.fns ?? [])
      .find((f) => f.auth.kind === 'user')!;
    const clash = defineArea({ name: 'clash', fns: [{ ...fn, name: 'mail_send' }] });
    expect(() => checkToolNames([mail!, clash])).toThrow(
      /mail_send is taken twice: by mail.send and mail_send/,
    );
    expect(() => checkToolNames([mail!], ['mail_send'])).toThrow(/taken twice/);
  });

  it('fails loudly on a name no client accepts', () => {
    const route = defineRoute({
      method: 'GET',
      url: '/x',
      name: 'odd.name with spaces',
      summary: 'Odd',
      response: z.object({}),
      errors: [],
      handler: async () => ({}),
    });
    const odd = defineArea({
      name: 'odd',
      v1: [defineV1Routes({ name: 'odd', prefix: '/odd', routes: [route] })],
    });
    expect(() => checkToolNames([odd])).toThrow(/does not match/);
  });
});

describe('leanSchema', () => {
  it('keeps a property named like a keyword, and enum values as they are', () => {
    const s = {
      type: 'object',
      properties: { pattern: { type: 'string', maxLength: 3 }, format: { enum: [{ pattern: 'x' }] } },
      additionalProperties: {},
      propertyNames: { type: 'string' },
    };
    expect(leanSchema(s, 'input')).toEqual({
      type: 'object',
      properties: { pattern: { type: 'string', maxLength: 3 }, format: { enum: [{ pattern: 'x' }] } },
    });
    expect(leanSchema(s, 'output')).toEqual({
      type: 'object',
      properties: { pattern: { type: 'string' }, format: { enum: [{ pattern: 'x' }] } },
    });
  });

  it('drops a pattern written beside a format', () => {
    const uuid = { type: 'string', format: 'uuid', pattern: '^[0-9a-f-]+$' };
    expect(leanSchema(uuid, 'input')).toEqual({ type: 'string', format: 'uuid' });
  });
});
