import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../config.ts';

describe('APP_CONNECTION_HANDOFF', () => {
  const handoff = (env: Record<string, string>) => loadConfig(env).appConnectionHandoff;

  it('auto (the default) is on when Pier takes clients itself, off behind an https proxy', () => {
    expect(handoff({})).toBe(true);
    expect(handoff({ PUBLIC_URL: 'http://pier.internal:8787' })).toBe(true);
    expect(handoff({ PUBLIC_URL: 'https://pier.example.com' })).toBe(false);
    expect(handoff({ APP_CONNECTION_HANDOFF: 'auto', PUBLIC_URL: 'https://pier.example.com' })).toBe(false);
  });

  it('on and off are taken as said', () => {
    expect(handoff({ APP_CONNECTION_HANDOFF: 'on', PUBLIC_URL: 'https://pier.example.com' })).toBe(true);
    expect(handoff({ APP_CONNECTION_HANDOFF: 'off' })).toBe(false);
    expect(() => handoff({ APP_CONNECTION_HANDOFF: 'yes' })).toThrow(ConfigError);
  });
});
