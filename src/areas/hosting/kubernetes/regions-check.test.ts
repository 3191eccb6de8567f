import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config.ts';
import type { Deps } from '../../../deps.ts';
import { checkKubernetesRegions, kubeDriverFor } from './deploy.ts';

// A Kubernetes region whose kubeconfig or context is wrong stops Pier at start-up, naming the region.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-kubecheck-'));
const file = path.join(dir, 'config.json');
fs.writeFileSync(
  file,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443' } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'prod-fra', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'prod-fra',
  }),
);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const deps = (env: Record<string, string>) =>
  ({
    config: loadConfig({ REGIONS: 'local,fra', DATABASE_URL: 'postgres://p@10.0.0.5/pier', ...env }),
  }) as unknown as Deps;

describe('checking the Kubernetes regions at start-up', () => {
  it('passes for a context the kubeconfig has; local regions get no driver', () => {
    const d = deps({ KUBERNETES_REGIONS: 'fra=prod-fra/pier-apps', KUBECONFIG: file });
    expect(() => checkKubernetesRegions(d)).not.toThrow();
    expect(kubeDriverFor(d, 'fra')?.namespace).toBe('pier-apps');
    expect(kubeDriverFor(d, 'local')).toBeNull();
  });

  it('names the region and the missing context', () => {
    const d = deps({ KUBERNETES_REGIONS: 'fra=prod-frq/pier-apps', KUBECONFIG: file });
    expect(() => checkKubernetesRegions(d)).toThrow(
      `Region fra (Kubernetes): no context 'prod-frq' in ${file}`,
    );
  });

  it('names the region when the kubeconfig cannot be read', () => {
    const d = deps({ KUBERNETES_REGIONS: 'fra=prod-fra/pier-apps', KUBECONFIG: path.join(dir, 'missing') });
    expect(() => checkKubernetesRegions(d)).toThrow(/^Region fra \(Kubernetes\): .*ENOENT/);
  });
});
