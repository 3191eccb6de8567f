import fs from 'node:fs';
import { dumpYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { schemaProblems } from '../../../../test/fakes/kube-schema.ts';
import { applyOrder, appObjects, ENV_VERSION, type KubeAppSpec } from './objects.ts';
import { clientModel } from './wire.ts';

const SAMPLE: KubeAppSpec = {
  namespace: 'pier-apps',
  projectId: 'prj_4mZ8tQ2vX9',
  slug: 'shop',
  deploymentId: 'dpl_7kLr2Qa9wE',
  appsDomain: 'apps.example.com',
  healthPath: '/healthz',
  start: 'node server.js',
  artifactUrl: 'https://blobs.example.com/artifacts/dpl_7kLr2Qa9wE.tar.gz?X-Amz-Signature=…',
  env: { DATABASE_URL: 'postgres://pier_app_shop:…@db.internal:5432/pier_app_shop', STRIPE_KEY: 'sk_live_…' },
  limits: { memoryMb: 512, cpuPercent: 50 },
  tls: { clusterIssuer: 'letsencrypt' },
  database: { cidr: '10.20.0.5/32', port: 5432 },
  ingressNamespace: 'ingress-nginx',
  ingressClassName: 'nginx',
};

const DOC = new URL('../../../../docs/operations.md', import.meta.url);
const START = '<!-- kubernetes-objects:start -->';
const END = '<!-- kubernetes-objects:end -->';

describe('the cluster objects of one app version', () => {
  it('are each valid against the official Kubernetes OpenAPI schemas, unknown fields included', () => {
    for (const tls of [{ clusterIssuer: 'letsencrypt' }, { secretName: 'wildcard-apps' }, null])
      for (const database of [SAMPLE.database, null])
        for (const obj of applyOrder(appObjects({ ...SAMPLE, tls, database })))
          expect(schemaProblems(obj), `${obj.kind} tls=${JSON.stringify(tls)}`).toEqual([]);
  });

  it('the strict check refuses what an API server refuses (an unknown field, a wrong type)', () => {
    const { deployment, networkPolicy } = appObjects(SAMPLE);
    const typo = structuredClone(deployment) as unknown as {
      spec: { template: { spec: Record<string, unknown> } };
    };
    typo.spec.template.spec.securityContex = {};
    expect(schemaProblems(typo as never)).toContain('unknown field "spec.template.spec.securityContex"');
    const wrong = structuredClone(networkPolicy) as unknown as { spec: { policyTypes: unknown } };
    wrong.spec.policyTypes = 'Ingress';
    expect(schemaProblems(wrong as never).length).toBeGreaterThan(0);
  });

  it('run as the restricted Pod Security Standard asks: non-root, no escalation, no capabilities', () => {
    const pod = appObjects(SAMPLE).deployment.spec!.template.spec!;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const c of [...pod.containers, ...(pod.initContainers ?? [])])
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
  });

  it('roll without downtime, with the plan as resources and the health path as probes', () => {
    const d = appObjects(SAMPLE).deployment.spec!;
    expect(d.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    const app = d.template.spec!.containers[0]!;
    expect(app.resources?.limits).toEqual({ memory: '512Mi', cpu: '500m' });
    expect(app.readinessProbe?.httpGet?.path).toBe('/healthz');
    expect(app.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(d.template.spec!.initContainers![0]!.env).toEqual([
      { name: 'ARTIFACT_URL', value: SAMPLE.artifactUrl },
    ]);
  });

  it('a secret change changes only the pod-template annotation (a rolling restart), not the selector', () => {
    const a = appObjects(SAMPLE);
    const b = appObjects({ ...SAMPLE, env: { ...SAMPLE.env, STRIPE_KEY: 'sk_live_new' } });
    expect(b.deployment.spec!.template.metadata!.annotations![ENV_VERSION]).not.toBe(
      a.deployment.spec!.template.metadata!.annotations![ENV_VERSION],
    );
    expect(b.deployment.spec!.selector).toEqual(a.deployment.spec!.selector);
    expect(Buffer.from(b.secret.data!.STRIPE_KEY!, 'base64').toString()).toBe('sk_live_new');
  });

  it('network: traffic only from the ingress controller; out to DNS, the database and public addresses', () => {
    const np = appObjects(SAMPLE).networkPolicy.spec!;
    expect(np.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.ingress).toHaveLength(1);
    const blocks = np.egress!.flatMap((e) => e.to ?? []).flatMap((t) => (t.ipBlock ? [t.ipBlock] : []));
    expect(blocks).toContainEqual({ cidr: '10.20.0.5/32' });
    expect(blocks.find((b) => b.cidr === '0.0.0.0/0')?.except).toContain('10.0.0.0/8');
  });

  it('match the YAML shown in docs/operations.md (UPDATE_DOCS=1 rewrites it)', () => {
    const yaml = applyOrder(appObjects(SAMPLE))
      .map((o) => dumpYaml(clientModel(o)))
      .join('---\n')
      // Quoted as the docs' formatter (biome) quotes them.
      .replace(/'(\d+)'/g, '"$1"');
    // The YAML as the client sends it: the NetworkPolicy's `from` must survive its model classes.
    expect(yaml).toContain('- from:');
    const doc = fs.readFileSync(DOC, 'utf8');
    const block = `${START}\n\`\`\`yaml\n${yaml}\`\`\`\n${END}`;
    const re = new RegExp(`${START}[\\s\\S]*?${END}`);
    if (process.env.UPDATE_DOCS) fs.writeFileSync(DOC, doc.replace(re, block));
    else expect(re.exec(doc)?.[0]).toBe(block);
  });
});
