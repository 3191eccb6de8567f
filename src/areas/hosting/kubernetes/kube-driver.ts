import {
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  type V1Deployment,
  type V1Pod,
  Watch,
} from '@kubernetes/client-node';
import {
  applyOrder,
  appName,
  appObjects,
  DEPLOYMENT_LABEL,
  type KubeAppSpec,
  MANAGED_BY,
  ownerSelector,
  PROJECT_LABEL,
} from './objects.ts';
import { clientModel } from './wire.ts';

// The Kubernetes runtime driver: what the local driver does with processes (start a version beside the old,
// health-check, switch, stop the old) done by the cluster. Pier applies the objects with server-side apply
// under its own field manager, watches the Deployment until the rollout is complete or failed, and on failure
// applies the previous version's objects again (`kubectl rollout undo` semantics: the old pods never stopped).

export const FIELD_MANAGER = 'pier';
/** The kinds Pier creates, as apiVersion + kind: destroy lists each by the owner labels. */
const OWNED = [
  ['networking.k8s.io/v1', 'Ingress'],
  ['v1', 'Service'],
  ['apps/v1', 'Deployment'],
  ['networking.k8s.io/v1', 'NetworkPolicy'],
  ['v1', 'Secret'],
] as const;

export type KubeAppInput = Omit<KubeAppSpec, 'namespace'>;
export type RolloutResult = { ok: true } | { ok: false; reason: string };
export type KubeLogLine = { pod: string; deploymentId: string | null; ts: Date; line: string };

export class KubeDriver {
  readonly #kc: KubeConfig;
  readonly #objects: KubernetesObjectApi;
  readonly #core: CoreV1Api;
  readonly namespace: string;
  readonly #rolloutTimeoutMs: number;

  constructor(kc: KubeConfig, namespace: string, opts: { rolloutTimeoutMs?: number } = {}) {
    this.#kc = kc;
    this.namespace = namespace;
    this.#objects = KubernetesObjectApi.makeApiClient(kc);
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#rolloutTimeoutMs = opts.rolloutTimeoutMs ?? 600_000;
  }

  objectsFor(app: KubeAppInput) {
    return appObjects({ ...app, namespace: this.namespace });
  }

  /** Server-side apply of every object of the version, in order; returns the Deployment's new generation. */
  async apply(app: KubeAppInput): Promise<number> {
    let generation = 0;
    for (const obj of applyOrder(this.objectsFor(app))) {
      const applied = await this.#objects.patch(
        clientModel(obj) as KubernetesObject,
        undefined,
        undefined,
        FIELD_MANAGER,
        true,
        PatchStrategy.ServerSideApply,
      );
      if (obj.kind === 'Deployment') generation = applied.metadata?.generation ?? 0;
    }
    return generation;
  }

  /**
   * Deploys a version (or the same version with a new environment): apply, then watch the rollout. A failed
   * rollout puts the previous version's objects back, so what served before goes on serving.
   */
  async deploy(app: KubeAppInput, previous: KubeAppInput | null): Promise<RolloutResult> {
    const generation = await this.apply(app);
    const result = await this.waitRollout(app, generation);
    if (!result.ok && previous) {
      const back = await this.apply(previous);
      const restored = await this.waitRollout(previous, back);
      if (!restored.ok)
        return {
          ok: false,
          reason: `${result.reason} Putting the previous version back failed too: ${restored.reason}`,
        };
    }
    return result;
  }

  /** Watches the app's Deployment until the generation is rolled out, has failed, or the time is up. */
  async waitRollout(app: KubeAppInput, generation: number): Promise<RolloutResult> {
    const name = appName(app.slug);
    const state = await new Promise<RolloutResult | 'failed'>((resolve, reject) => {
      let abort: AbortController | undefined;
      let settled = false;
      const finish = (r: RolloutResult | 'failed' | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        abort?.abort();
        if (r instanceof Error) reject(r);
        else resolve(r);
      };
      const timer = setTimeout(
        () =>
          finish({
            ok: false,
            reason: `The new version did not become ready within ${Math.round(this.#rolloutTimeoutMs / 1000)} s.`,
          }),
        this.#rolloutTimeoutMs,
      );
      new Watch(this.#kc)
        .watch(
          `/apis/apps/v1/namespaces/${this.namespace}/deployments`,
          { fieldSelector: `metadata.name=${name}` },
          (phase, obj: V1Deployment) => {
            if (phase === 'DELETED')
              finish(new Error(`The Deployment ${name} was deleted during the rollout.`));
            const s = rolloutState(obj, generation);
            if (s === 'complete') finish({ ok: true });
            else if (s === 'failed') finish('failed');
          },
          (err) => {
            if (!settled) finish(err instanceof Error ? err : new Error(`The watch of ${name} ended.`));
          },
        )
        .then((a) => {
          abort = a;
          if (settled) a.abort();
        }, finish);
    });
    if (state !== 'failed') return state;
    return { ok: false, reason: await this.failureReason(app) };
  }

  /** Why the version's pods do not run, in words, from their container states. */
  async failureReason(app: KubeAppInput): Promise<string> {
    const pods = await this.#core.listNamespacedPod({
      namespace: this.namespace,
      labelSelector: `${ownerSelector(app.projectId)},${DEPLOYMENT_LABEL}=${app.deploymentId}`,
    });
    for (const pod of pods.items) {
      const words = podProblem(pod, app);
      if (words) return words;
    }
    return `The new version did not become ready before the progress deadline (health check GET ${app.healthPath}).`;
  }

  /**
   * Pods of live apps that keep exiting (CrashLoopBackOff after `restarts` restarts): the kubelet goes on
   * restarting them with back-off; Pier marks the deployment `crashed`, as the local driver does (decision 069).
   */
  async crashLooping(restarts = 5): Promise<{ projectId: string; deploymentId: string; reason: string }[]> {
    const pods = await this.#core.listNamespacedPod({
      namespace: this.namespace,
      labelSelector: `${MANAGED_BY}=pier`,
    });
    const out: { projectId: string; deploymentId: string; reason: string }[] = [];
    for (const pod of pods.items) {
      const labels = pod.metadata?.labels ?? {};
      const c = pod.status?.containerStatuses?.find((s) => s.name === 'app');
      if (!c || c.state?.waiting?.reason !== 'CrashLoopBackOff' || (c.restartCount ?? 0) < restarts) continue;
      const last = c.lastState?.terminated;
      const why =
        last?.reason === 'OOMKilled' ? 'out of memory, OOMKilled' : `exit code ${last?.exitCode ?? '?'}`;
      out.push({
        projectId: labels[PROJECT_LABEL] ?? '',
        deploymentId: labels[DEPLOYMENT_LABEL] ?? '',
        reason: `The app kept exiting after it went live (${why}; ${c.restartCount} restarts, CrashLoopBackOff).`,
      });
    }
    return out;
  }

  /** Deletes every object Pier labelled as the project's; returns `Kind/name` of each. */
  async destroy(projectId: string): Promise<string[]> {
    const gone: string[] = [];
    for (const [apiVersion, kind] of OWNED) {
      const list = await this.#objects.list(
        apiVersion,
        kind,
        this.namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        ownerSelector(projectId),
      );
      for (const item of list.items) {
        const name = item.metadata?.name ?? '';
        await this.#objects.delete({ apiVersion, kind, metadata: { name, namespace: this.namespace } });
        gone.push(`${kind}/${name}`);
      }
    }
    return gone;
  }

  /** The last lines of each of the project's pods (after sinceTime when given), through the log API. */
  async logs(projectId: string, tailLines = 200, sinceTime?: Date): Promise<KubeLogLine[]> {
    const pods = await this.#core.listNamespacedPod({
      namespace: this.namespace,
      labelSelector: ownerSelector(projectId),
    });
    const out: KubeLogLine[] = [];
    for (const pod of pods.items) {
      const name = pod.metadata?.name ?? '';
      const text = await this.#core.readNamespacedPodLog({
        name,
        namespace: this.namespace,
        container: 'app',
        tailLines,
        timestamps: true,
        // The log API takes whole seconds back from now; lines at or before sinceTime are dropped below.
        ...(sinceTime
          ? { sinceSeconds: Math.max(1, Math.ceil((Date.now() - sinceTime.getTime()) / 1000) + 1) }
          : {}),
      });
      for (const raw of String(text).split('\n')) {
        if (!raw) continue;
        // timestamps=true: each line starts with its RFC 3339 time and a space.
        const at = raw.indexOf(' ');
        const ts = new Date(raw.slice(0, at));
        if (at > 0 && !Number.isNaN(ts.getTime())) {
          if (sinceTime && ts <= sinceTime) continue;
          out.push({
            pod: name,
            deploymentId: pod.metadata?.labels?.[DEPLOYMENT_LABEL] ?? null,
            ts,
            line: raw.slice(at + 1),
          });
        } else out.push({ pod: name, deploymentId: null, ts: new Date(), line: raw });
      }
    }
    return out;
  }
}

/** kubectl rollout status: complete when the generation is observed and every replica updated and available. */
export function rolloutState(d: V1Deployment, generation: number): 'progressing' | 'complete' | 'failed' {
  const s = d.status ?? {};
  if ((s.observedGeneration ?? 0) < generation) return 'progressing';
  const progressing = s.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return 'failed';
  const want = d.spec?.replicas ?? 1;
  if ((s.updatedReplicas ?? 0) >= want && (s.availableReplicas ?? 0) >= want && !s.unavailableReplicas)
    return 'complete';
  return 'progressing';
}

/** A pod's trouble in the words the local driver uses; null when nothing is wrong with it. */
export function podProblem(pod: V1Pod, app: Pick<KubeAppInput, 'limits' | 'healthPath'>): string | null {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const c of statuses) {
    const waiting = c.state?.waiting?.reason;
    const last = c.lastState?.terminated ?? c.state?.terminated;
    if (last?.reason === 'OOMKilled')
      return `The app ran out of memory (limit ${app.limits.memoryMb} MB) and was killed (OOMKilled).`;
    if (waiting === 'ImagePullBackOff' || waiting === 'ErrImagePull')
      return `The image of the ${c.name} container could not be pulled (${waiting}).`;
    if (waiting === 'CrashLoopBackOff')
      return c.name === 'fetch-release'
        ? `The release could not be fetched (CrashLoopBackOff, exit code ${last?.exitCode ?? '?'}).`
        : `The app keeps exiting during start-up (CrashLoopBackOff, exit code ${last?.exitCode ?? '?'}).`;
    if (waiting === 'CreateContainerConfigError')
      return `The container could not be configured (${waiting}).`;
    if (c.name === 'app' && c.state?.running && !c.ready)
      return `The health check GET ${app.healthPath} did not pass before the progress deadline.`;
  }
  return null;
}
