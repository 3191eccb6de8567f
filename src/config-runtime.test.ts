import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

const PG = 'postgres://pier:pw@10.20.0.5:5432/pier';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    return err instanceof ConfigError ? err.problems : [String(err)];
  }
}

describe('RUNTIME_DRIVER and KUBERNETES_REGIONS', () => {
  it('by default every region runs locally', () => {
    expect(loadConfig({ REGIONS: 'local,fra' }).runtime.drivers).toEqual({
      local: { kind: 'local' },
      fra: { kind: 'local' },
    });
  });

  it('maps a region to a kubeconfig context and namespace, next to a local one', () => {
    const c = loadConfig({
      REGIONS: 'local,fra',
      KUBERNETES_REGIONS: 'fra=prod-fra/pier-apps',
      DATABASE_URL: PG,
      KUBERNETES_TLS: 'issuer:letsencrypt',
    });
    expect(c.runtime.drivers).toEqual({
      local: { kind: 'local' },
      fra: { kind: 'kubernetes', context: 'prod-fra', namespace: 'pier-apps' },
    });
    expect(c.runtime.kubernetes).toMatchObject({
      tls: { clusterIssuer: 'letsencrypt' },
      databaseHost: '10.20.0.5',
      databaseCidr: '10.20.0.5/32',
      ingressNamespace: 'ingress-nginx',
    });
  });

  it('RUNTIME_DRIVER=kubernetes puts every region on the current context', () => {
    const c = loadConfig({ RUNTIME_DRIVER: 'kubernetes', DATABASE_URL: PG });
    expect(c.runtime.drivers).toEqual({ local: { kind: 'kubernetes', namespace: 'pier-apps' } });
  });

  it('refuses PGlite for the Kubernetes driver with a clear start-up error', () => {
    const [p] = problems({ REGIONS: 'local,fra', KUBERNETES_REGIONS: 'fra=ctx/ns' });
    expect(p).toMatch(/^DATABASE_URL: the Kubernetes driver \(region fra\) needs PostgreSQL; PGlite/);
    expect(problems({ RUNTIME_DRIVER: 'kubernetes' })[0]).toMatch(/region local/);
  });

  it('names each bad value', () => {
    expect(
      problems({
        REGIONS: 'local',
        DATABASE_URL: PG,
        RUNTIME_DRIVER: 'nomad',
        KUBERNETES_REGIONS: 'fra=ctx/ns,local=ctx/Bad_NS,oops',
        KUBERNETES_TLS: 'acme',
      }),
    ).toEqual([
      "RUNTIME_DRIVER: must be local or kubernetes, not 'nomad'",
      "KUBERNETES_REGIONS: 'fra' is not in REGIONS",
      "KUBERNETES_REGIONS: 'Bad_NS' is not a namespace name",
      "KUBERNETES_REGIONS: 'oops' must look like region=context/namespace",
      'KUBERNETES_TLS: must be secret:<name> or issuer:<name>',
    ]);
  });
});
