import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { schemaProblems } from './kube-schema.ts';

// A small, strict Kubernetes API server on 127.0.0.1 for exactly the objects Pier's driver uses: discovery,
// server-side apply (PATCH application/apply-patch+yaml with a fieldManager; any other content type 415),
// GET, LIST with label selectors, DELETE, a watch stream, the Deployment status subresource and pod logs.
// Objects are checked against the official schemas (unknown fields 422, as fieldValidation=Strict does). It
// also plays the controller: an applied pod template rolls out (a new pod beside the old, which goes only
// once the new one is ready) or fails the way the test asks (CrashLoopBackOff, ImagePullBackOff, OOMKilled).

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
};
export type Outcome = 'ready' | 'CrashLoopBackOff' | 'ImagePullBackOff' | 'OOMKilled';

const RESOURCES: Record<string, { kind: string; name: string }[]> = {
  v1: [
    { kind: 'Secret', name: 'secrets' },
    { kind: 'Service', name: 'services' },
    { kind: 'Pod', name: 'pods' },
  ],
  'apps/v1': [{ kind: 'Deployment', name: 'deployments' }],
  'networking.k8s.io/v1': [
    { kind: 'Ingress', name: 'ingresses' },
    { kind: 'NetworkPolicy', name: 'networkpolicies' },
  ],
};
const KIND_OF = new Map(
  Object.entries(RESOURCES).flatMap(([gv, rs]) => rs.map((r) => [`${gv}/${r.name}`, { gv, kind: r.kind }])),
);

export class FakeKubeApi {
  readonly token = 'fake-token';
  /** Stored objects by `gv/resource/namespace/name`. */
  readonly objects = new Map<string, Obj>();
  /** What the pods of a version do, by their template's `pier.dev/deployment` label (default: ready). */
  readonly outcomes = new Map<string, Outcome>();
  /** What a version not named in outcomes does. */
  defaultOutcome: Outcome = 'ready';
  /** Every rollout the controller ran: which pod template replaced which, and the ready pods meanwhile. */
  readonly rollouts: {
    deployment: string;
    from: string | null;
    to: string;
    outcome: Outcome;
    minReady: number;
  }[] = [];
  /** Requests as method + path, for assertions on what the driver did. */
  readonly requests: string[] = [];
  /** Lines each pod "printed" and when, served by the log API. */
  readonly podLogs = new Map<string, { ts: string; line: string }[]>();
  #server = http.createServer((req, res) => void this.#handle(req, res));
  #watchers = new Set<{ prefix: string; name?: string; res: http.ServerResponse }>();
  #rv = 1;
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const w of this.#watchers) w.res.end();
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
  }

  /** Objects of a kind (e.g. `apps/v1/deployments`) in a namespace. */
  list(gvr: string, namespace: string): Obj[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`${gvr}/${namespace}/`))
      .map(([, o]) => o);
  }

  labelled(selector: string): Obj[] {
    return [...this.objects.values()].filter((o) => matches(o, selector));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    this.requests.push(`${req.method} ${url.pathname}`);
    const body = await readBody(req);
    if (req.headers.authorization !== `Bearer ${this.token}`)
      return status(res, 401, 'Unauthorized', 'no token');
    const m =
      /^\/(?:api\/(v1)|apis\/([^/]+\/[^/]+))(?:\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+)(?:\/(status|log))?)?)?$/.exec(
        url.pathname,
      );
    if (!m) return status(res, 404, 'NotFound', `no route ${url.pathname}`);
    const gv = (m[1] ?? m[2])!;
    const [, , , ns, resource, name, sub] = m;
    if (!ns) {
      if (!RESOURCES[gv]) return status(res, 404, 'NotFound', `no group version ${gv}`);
      return json(res, 200, {
        kind: 'APIResourceList',
        groupVersion: gv,
        resources: RESOURCES[gv]!.map((r) => ({ ...r, namespaced: true, singularName: '', verbs: ['get'] })),
      });
    }
    const kind = KIND_OF.get(`${gv}/${resource}`);
    if (!kind) return status(res, 404, 'NotFound', `the server could not find the requested resource`);
    const key = `${gv}/${resource}/${ns}/${name}`;
    if (!name) {
      if (req.method !== 'GET') return status(res, 405, 'MethodNotAllowed', 'only GET on a collection here');
      const selector = url.searchParams.get('labelSelector') ?? '';
      const field = url.searchParams.get('fieldSelector') ?? '';
      if (field && !/^metadata\.name=[a-z0-9.-]+$/.test(field))
        return status(res, 400, 'BadRequest', `unsupported field selector ${field}`);
      const only = field ? field.slice('metadata.name='.length) : undefined;
      if (url.searchParams.get('watch') === 'true') return this.#watch(res, `${gv}/${resource}/${ns}/`, only);
      const items = this.list(`${gv}/${resource}`, ns).filter(
        (o) => matches(o, selector) && (!only || o.metadata.name === only),
      );
      return json(res, 200, {
        apiVersion: gv,
        kind: `${kind.kind}List`,
        metadata: { resourceVersion: String(this.#rv) },
        items,
      });
    }
    const existing = this.objects.get(key);
    if (sub === 'log') {
      if (req.method !== 'GET' || !existing) return status(res, 404, 'NotFound', `pods "${name}" not found`);
      const tail = Number(url.searchParams.get('tailLines') ?? 0);
      const since = Number(url.searchParams.get('sinceSeconds') ?? 0);
      const stamped = url.searchParams.get('timestamps') === 'true';
      const lines = (this.podLogs.get(name) ?? []).filter(
        (l) => !since || Date.parse(l.ts) >= Date.now() - since * 1000,
      );
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end(
        (tail ? lines.slice(-tail) : lines).map((l) => `${stamped ? `${l.ts} ` : ''}${l.line}\n`).join(''),
      );
    }
    if (req.method === 'GET') {
      if (!existing) return status(res, 404, 'NotFound', `${resource} "${name}" not found`);
      return json(res, 200, existing);
    }
    if (req.method === 'DELETE') {
      if (!existing) return status(res, 404, 'NotFound', `${resource} "${name}" not found`);
      this.#remove(key);
      if (kind.kind === 'Deployment') for (const p of this.#pods(ns, name)) this.#remove(podKey(ns, p));
      return json(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name } });
    }
    if (req.method !== 'PATCH')
      return status(res, 405, 'MethodNotAllowed', `${req.method} is not served here`);
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (sub === 'status') {
      if (type !== 'application/merge-patch+json')
        return status(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format`);
      if (!existing || kind.kind !== 'Deployment') return status(res, 404, 'NotFound', `${name} not found`);
      const patch = parse(body) as { status?: Record<string, unknown> } | null;
      if (!patch?.status) return status(res, 400, 'BadRequest', 'a status patch needs .status');
      existing.status = { ...existing.status, ...patch.status };
      this.#changed(key, existing);
      return json(res, 200, existing);
    }
    if (type !== 'application/apply-patch+yaml')
      return status(
        res,
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format ${type}`,
      );
    const manager = url.searchParams.get('fieldManager');
    if (!manager) return status(res, 422, 'Invalid', 'fieldManager is required for apply requests');
    // JSON is the YAML subset the client sends; anything else is refused rather than half-read.
    const obj = parse(body) as Obj | null;
    if (!obj || typeof obj !== 'object')
      return status(res, 400, 'BadRequest', 'the body is not a JSON/YAML object');
    if (obj.apiVersion !== gv || obj.kind !== kind.kind || obj.metadata?.name !== name)
      return status(res, 400, 'BadRequest', 'the object does not match the URL (apiVersion, kind, name)');
    if (obj.metadata.namespace && obj.metadata.namespace !== ns)
      return status(res, 400, 'BadRequest', 'the namespace of the object does not match the URL');
    const problems = schemaProblems(obj);
    if (problems.length)
      return status(res, 422, 'Invalid', `${kind.kind} "${name}" is invalid: ${problems.join('; ')}`);
    const created = !existing;
    const prevTemplate = existing?.spec ? templateHash(existing) : null;
    const next: Obj = {
      ...obj,
      metadata: {
        ...obj.metadata,
        namespace: ns,
        uid: (existing?.metadata.uid as string) ?? `uid-${this.#rv}`,
        generation:
          ((existing?.metadata.generation as number) ?? 0) + (created || changedSpec(existing, obj) ? 1 : 0),
        managedFields: [{ manager, operation: 'Apply', apiVersion: gv }],
      },
      ...(existing?.status ? { status: existing.status } : {}),
    };
    this.#changed(key, next);
    json(res, created ? 201 : 200, next);
    if (kind.kind === 'Deployment' && templateHash(next) !== prevTemplate)
      this.#rollout(ns, next, prevTemplate);
  }

  /** A live app starts crash-looping: its pods keep exiting, the Deployment loses its available replica. */
  crash(ns: string, deployment: string, exitCode = 1): void {
    for (const p of this.#pods(ns, deployment)) {
      const pod = this.objects.get(podKey(ns, p))!;
      this.#changed(podKey(ns, p), {
        ...pod,
        status: {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'app',
              ready: false,
              restartCount: 5,
              state: { waiting: { reason: 'CrashLoopBackOff' } },
              lastState: { terminated: { reason: 'Error', exitCode } },
            },
          ],
        },
      });
    }
    const key = `apps/v1/deployments/${ns}/${deployment}`;
    const d = this.objects.get(key);
    if (d)
      this.#changed(key, {
        ...d,
        status: { ...d.status, availableReplicas: 0, readyReplicas: 0, unavailableReplicas: 1 },
      });
  }

  #watch(res: http.ServerResponse, prefix: string, name?: string): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const w = { prefix, name, res };
    this.#watchers.add(w);
    res.on('close', () => this.#watchers.delete(w));
    for (const [k, o] of this.objects)
      if (k.startsWith(prefix) && (!name || o.metadata.name === name))
        res.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
  }

  #changed(key: string, obj: Obj, type = this.objects.has(key) ? 'MODIFIED' : 'ADDED'): void {
    obj.metadata.resourceVersion = String(++this.#rv);
    this.objects.set(key, obj);
    for (const w of this.#watchers)
      if (key.startsWith(w.prefix) && (!w.name || w.name === obj.metadata.name))
        w.res.write(`${JSON.stringify({ type, object: obj })}\n`);
  }

  #remove(key: string): void {
    const obj = this.objects.get(key);
    if (!obj) return;
    this.objects.delete(key);
    for (const w of this.#watchers)
      if (key.startsWith(w.prefix) && (!w.name || w.name === obj.metadata.name))
        w.res.write(`${JSON.stringify({ type: 'DELETED', object: obj })}\n`);
  }

  #pods(ns: string, deployment: string): string[] {
    return this.list('v1/pods', ns)
      .filter((p) => p.metadata.labels?.['fake.pier.dev/owner'] === deployment)
      .map((p) => p.metadata.name);
  }

  /** The controller: a new pod of the new template; the old goes only once the new is ready (maxUnavailable 0). */
  #rollout(ns: string, dep: Obj, from: string | null): void {
    const name = dep.metadata.name;
    const to = templateHash(dep);
    const tmpl = (dep.spec as { template: { metadata: { labels: Record<string, string> } } }).template;
    const outcome =
      this.outcomes.get(tmpl.metadata.labels['pier.dev/deployment'] ?? '') ?? this.defaultOutcome;
    const readyPods = () =>
      this.#pods(ns, name).filter((p) => this.objects.get(podKey(ns, p))?.status?.phase === 'Running').length;
    const record = { deployment: name, from, to, outcome, minReady: readyPods() };
    this.rollouts.push(record);
    const key = `apps/v1/deployments/${ns}/${name}`;
    const setStatus = (s: Record<string, unknown>) => {
      const d = this.objects.get(key);
      if (d)
        this.#changed(key, {
          ...d,
          status: { observedGeneration: d.metadata.generation, replicas: 1, ...s },
        });
    };
    setStatus({
      updatedReplicas: 0,
      availableReplicas: readyPods(),
      conditions: [{ type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated' }],
    });
    const pod = `${name}-${to}-${Math.random().toString(36).slice(2, 7)}`;
    const container = (state: Record<string, unknown>) => [
      { name: 'app', ready: outcome === 'ready', restartCount: 0, ...state },
    ];
    const waiting = (reason: string) => ({ state: { waiting: { reason } }, restartCount: 3 });
    const podStatus =
      outcome === 'ready'
        ? { phase: 'Running', containerStatuses: container({ state: { running: {} } }) }
        : outcome === 'OOMKilled'
          ? {
              phase: 'Running',
              containerStatuses: container({
                ...waiting('CrashLoopBackOff'),
                lastState: { terminated: { reason: 'OOMKilled', exitCode: 137 } },
              }),
            }
          : outcome === 'CrashLoopBackOff'
            ? {
                phase: 'Running',
                containerStatuses: container({
                  ...waiting('CrashLoopBackOff'),
                  lastState: { terminated: { reason: 'Error', exitCode: 1 } },
                }),
              }
            : { phase: 'Pending', containerStatuses: container(waiting('ImagePullBackOff')) };
    setTimeout(() => {
      const old = this.#pods(ns, name);
      this.#changed(podKey(ns, pod), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: pod,
          namespace: ns,
          labels: { ...tmpl.metadata.labels, 'fake.pier.dev/owner': name, 'pod-template-hash': to },
        },
        status: podStatus,
      });
      this.podLogs.set(pod, [{ ts: new Date().toISOString(), line: `listening on 8080 (${to})` }]);
      if (outcome !== 'ready') {
        setStatus({
          updatedReplicas: 1,
          availableReplicas: old.length ? 1 : 0,
          unavailableReplicas: 1,
          conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
        });
        return;
      }
      // Ready: counted before the old pods go, so the Service always has a ready endpoint.
      record.minReady = Math.min(record.minReady || readyPods(), readyPods());
      for (const p of old) this.#remove(podKey(ns, p));
      record.minReady = Math.min(record.minReady, readyPods());
      setStatus({
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [
          { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
          { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
        ],
      });
    }, 20);
  }
}

const podKey = (ns: string, name: string) => `v1/pods/${ns}/${name}`;

function templateHash(o: Obj): string {
  return createHash('sha256')
    .update(JSON.stringify((o.spec as { template?: unknown } | undefined)?.template ?? null))
    .digest('hex')
    .slice(0, 10);
}

function changedSpec(a: Obj | undefined, b: Obj): boolean {
  return JSON.stringify(a?.spec ?? a?.data ?? null) !== JSON.stringify(b.spec ?? b.data ?? null);
}

/** Equality-based selectors: `a=b,c!=d,e` (what Pier uses). */
function matches(o: Obj, selector: string): boolean {
  const labels = o.metadata.labels ?? {};
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [k, op, v] = /^([^!=]+)(!=|==|=)?(.*)$/.exec(term)!.slice(1) as [
        string,
        string | undefined,
        string,
      ];
      if (!op) return k in labels;
      return op === '!=' ? labels[k] !== v : labels[k] === v;
    });
}

function parse(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  json(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
}
