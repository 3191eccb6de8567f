import { createHash } from 'node:crypto';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IIngress, INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import type { ISecret, ISecurityContext, IService } from 'kubernetes-models/v1';

// The cluster objects of one app version (docs/operations.md, "The Kubernetes driver"). Pure functions: the
// driver applies what these return with server-side apply, so the same input always gives the same objects.
// Typed with kubernetes-models' interfaces, so a misspelt field is a compile error, and the unit tests validate
// each object against the official OpenAPI schemas.

export const MANAGED_BY = 'app.kubernetes.io/managed-by';
export const PROJECT_LABEL = 'pier.dev/project';
export const DEPLOYMENT_LABEL = 'pier.dev/deployment';
export const ENV_VERSION = 'pier.dev/env-version';
/** Every object Pier owns carries these labels: listing by them is how destroy and GC find what to delete. */
export const ownerSelector = (projectId: string) => `${MANAGED_BY}=pier,${PROJECT_LABEL}=${projectId}`;

export const APP_PORT = 8080;
const DEFAULT_IMAGE = 'node:24-slim';
// The node image's unprivileged user: the app never runs as root (restricted Pod Security Standard).
const APP_UID = 1000;

export type KubeTls = { secretName: string } | { clusterIssuer: string } | null;

export type KubeAppSpec = {
  namespace: string;
  projectId: string;
  slug: string;
  deploymentId: string;
  /** `<slug>.<appsDomain>` is the app's host. */
  appsDomain: string;
  healthPath: string;
  start: string;
  /** A presigned GET of the release artifact (tar.gz), fetched by the init container. */
  artifactUrl: string;
  /** The project's secrets plus DATABASE_URL. */
  env: Record<string, string>;
  limits: { memoryMb: number; cpuPercent: number };
  tls: KubeTls;
  /** The database server the app may reach (NetworkPolicy egress); null when none. */
  database: { cidr: string; port: number } | null;
  /** Namespace of the ingress controller: the only source of traffic to app pods. */
  ingressNamespace: string;
  ingressClassName?: string;
  image?: string;
  progressDeadlineSeconds?: number;
  /** Set by an explicit restart: a new value rolls the pods as `kubectl rollout restart` does. */
  restartedAt?: string;
};

export type KubeAppObjects = {
  secret: ISecret;
  deployment: IDeployment;
  service: IService;
  ingress: IIngress;
  networkPolicy: INetworkPolicy;
};

export const appName = (slug: string) => `app-${slug}`;

/** The environment's fingerprint: the pod-template annotation that rolls the pods when a secret changes. */
export function envVersion(env: Record<string, string>): string {
  const sorted = Object.keys(env)
    .sort()
    .map((k) => [k, env[k]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

function labels(spec: KubeAppSpec): Record<string, string> {
  return {
    [MANAGED_BY]: 'pier',
    [PROJECT_LABEL]: spec.projectId,
    'app.kubernetes.io/name': appName(spec.slug),
  };
}

function meta(spec: KubeAppSpec, name = appName(spec.slug)) {
  return { name, namespace: spec.namespace, labels: labels(spec) };
}

// Downloads and unpacks the release with what the base image has (node and tar), into the shared emptyDir.
const FETCH_SCRIPT =
  "node -e \"fetch(process.env.ARTIFACT_URL).then(async r=>{if(!r.ok)throw new Error('artifact download: HTTP '+r.status);" +
  "require('fs').writeFileSync('/tmp/release.tar.gz',Buffer.from(await r.arrayBuffer()))}).catch(e=>{console.error(e.message);process.exit(1)})\"" +
  ' && tar -xzf /tmp/release.tar.gz -C /app && rm /tmp/release.tar.gz';

const containerSecurity: ISecurityContext = {
  runAsNonRoot: true,
  runAsUser: APP_UID,
  runAsGroup: APP_UID,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

export function appObjects(spec: KubeAppSpec): KubeAppObjects {
  const name = appName(spec.slug);
  const envSecret = `${name}-env`;
  const image = spec.image ?? DEFAULT_IMAGE;
  const memory = `${spec.limits.memoryMb}Mi`;
  const cpuMilli = Math.max(10, spec.limits.cpuPercent * 10);
  const tmp = { name: 'tmp', mountPath: '/tmp' };
  const secret: ISecret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta(spec, envSecret),
    type: 'Opaque',
    data: Object.fromEntries(
      Object.entries(spec.env).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
    ),
  };
  const probe = (periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path: spec.healthPath, port: 'http' },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 2,
  });
  const deployment: IDeployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(spec),
    spec: {
      replicas: 1,
      revisionHistoryLimit: 5,
      progressDeadlineSeconds: spec.progressDeadlineSeconds ?? 300,
      selector: { matchLabels: { [PROJECT_LABEL]: spec.projectId, [MANAGED_BY]: 'pier' } },
      // A new version takes traffic only once ready; the old pod serves until then.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: {
          labels: { ...labels(spec), [DEPLOYMENT_LABEL]: spec.deploymentId },
          annotations: {
            [ENV_VERSION]: envVersion(spec.env),
            ...(spec.restartedAt ? { 'kubectl.kubernetes.io/restartedAt': spec.restartedAt } : {}),
          },
        },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: APP_UID,
            runAsGroup: APP_UID,
            fsGroup: APP_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          volumes: [
            { name: 'release', emptyDir: {} },
            { name: 'tmp', emptyDir: { sizeLimit: '256Mi' } },
          ],
          initContainers: [
            {
              name: 'fetch-release',
              image,
              command: ['sh', '-c', FETCH_SCRIPT],
              env: [{ name: 'ARTIFACT_URL', value: spec.artifactUrl }],
              securityContext: containerSecurity,
              resources: {
                limits: { memory: '256Mi', cpu: '500m' },
                requests: { memory: '64Mi', cpu: '50m' },
              },
              volumeMounts: [{ name: 'release', mountPath: '/app' }, tmp],
            },
          ],
          containers: [
            {
              name: 'app',
              image,
              workingDir: '/app',
              command: ['sh', '-c', spec.start],
              ports: [{ name: 'http', containerPort: APP_PORT, protocol: 'TCP' }],
              env: [
                { name: 'PORT', value: String(APP_PORT) },
                { name: 'NODE_ENV', value: 'production' },
                { name: 'HOME', value: '/tmp' },
              ],
              envFrom: [{ secretRef: { name: envSecret } }],
              readinessProbe: probe(5, 3),
              livenessProbe: { ...probe(20, 3), initialDelaySeconds: 10 },
              // The Service stops routing to a terminating pod before it stops answering.
              lifecycle: { preStop: { sleep: { seconds: 5 } } },
              resources: {
                limits: { memory, cpu: `${cpuMilli}m` },
                requests: { memory, cpu: `${Math.max(10, Math.round(cpuMilli / 4))}m` },
              },
              securityContext: containerSecurity,
              volumeMounts: [{ name: 'release', mountPath: '/app', readOnly: true }, tmp],
            },
          ],
        },
      },
    },
  };
  const service: IService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(spec),
    spec: {
      type: 'ClusterIP',
      selector: { [PROJECT_LABEL]: spec.projectId, [MANAGED_BY]: 'pier' },
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    },
  };
  const host = `${spec.slug}.${spec.appsDomain}`;
  const tls = spec.tls;
  const ingress: IIngress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      ...meta(spec),
      ...(tls && 'clusterIssuer' in tls
        ? { annotations: { 'cert-manager.io/cluster-issuer': tls.clusterIssuer } }
        : {}),
    },
    spec: {
      ...(spec.ingressClassName ? { ingressClassName: spec.ingressClassName } : {}),
      ...(tls
        ? { tls: [{ hosts: [host], secretName: 'secretName' in tls ? tls.secretName : `${name}-tls` }] }
        : {}),
      rules: [
        {
          host,
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name, port: { name: 'http' } } } },
            ],
          },
        },
      ],
    },
  };
  const networkPolicy: INetworkPolicy = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(spec),
    spec: {
      podSelector: { matchLabels: { [PROJECT_LABEL]: spec.projectId, [MANAGED_BY]: 'pier' } },
      policyTypes: ['Ingress', 'Egress'],
      // Traffic only from the ingress controller: not from other apps' pods nor Pier's own.
      ingress: [
        {
          from: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': spec.ingressNamespace } } },
          ],
          ports: [{ protocol: 'TCP', port: APP_PORT }],
        },
      ],
      egress: [
        // Name resolution (the cluster DNS).
        {
          to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
        // The internet, but no private range: cluster pods and services (Pier's, other apps') live there.
        {
          to: [
            {
              ipBlock: {
                cidr: '0.0.0.0/0',
                except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16'],
              },
            },
          ],
        },
        ...(spec.database
          ? [
              {
                to: [{ ipBlock: { cidr: spec.database.cidr } }],
                ports: [{ protocol: 'TCP' as const, port: spec.database.port }],
              },
            ]
          : []),
      ],
    },
  };
  return { secret, deployment, service, ingress, networkPolicy };
}

/** In apply order: the Secret before the Deployment that reads it, the Deployment before what routes to it. */
export function applyOrder(o: KubeAppObjects) {
  return [o.secret, o.networkPolicy, o.deployment, o.service, o.ingress];
}
