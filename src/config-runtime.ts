// Which runtime driver serves each region (issue 33, docs/operations.md "The Kubernetes driver"). Parsed with
// the rest of the configuration, so a bad value stops Pier at start-up with the variable named.
//
//   RUNTIME_DRIVER=local|kubernetes      the driver of every region not named in KUBERNETES_REGIONS (local)
//   KUBERNETES_REGIONS=fra=ctx/ns,...    regions run by the Kubernetes driver: kubeconfig context / namespace
//   KUBERNETES_NAMESPACE                 the namespace when RUNTIME_DRIVER=kubernetes names none (pier-apps)
//   KUBECONFIG                           the kubeconfig file (default: ~/.kube/config, or in-cluster)
//   KUBERNETES_TLS=secret:NAME|issuer:NAME  the Ingress certificate: a wildcard Secret or a cert-manager issuer
//   KUBERNETES_INGRESS_CLASS, KUBERNETES_INGRESS_NAMESPACE (ingress-nginx)
//   KUBERNETES_DATABASE_HOST             the PostgreSQL host as pods reach it (default: DATABASE_URL's host)
//   KUBERNETES_DATABASE_CIDR             its address for the NetworkPolicy (default: the host, if an IPv4)

export type RegionDriver = { kind: 'local' } | { kind: 'kubernetes'; context?: string; namespace: string };

export type KubernetesSettings = {
  kubeconfig?: string;
  tls: { secretName: string } | { clusterIssuer: string } | null;
  ingressClassName?: string;
  ingressNamespace: string;
  databaseHost?: string;
  databaseCidr?: string;
};

export type RuntimeConfig = { drivers: Record<string, RegionDriver>; kubernetes: KubernetesSettings };

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function loadRuntimeDrivers(
  env: Record<string, string | undefined>,
  regions: string[],
  databaseUrl: string | undefined,
): { problems: string[]; runtime: RuntimeConfig } {
  const problems: string[] = [];
  const fallback = env.RUNTIME_DRIVER ?? 'local';
  if (fallback !== 'local' && fallback !== 'kubernetes')
    problems.push(`RUNTIME_DRIVER: must be local or kubernetes, not '${fallback}'`);
  const namespace = env.KUBERNETES_NAMESPACE ?? 'pier-apps';
  if (!NAME.test(namespace)) problems.push(`KUBERNETES_NAMESPACE: '${namespace}' is not a namespace name`);
  const drivers: Record<string, RegionDriver> = Object.fromEntries(
    regions.map((r) => [
      r,
      fallback === 'kubernetes' ? { kind: 'kubernetes', namespace } : { kind: 'local' },
    ]),
  );
  for (const entry of (env.KUBERNETES_REGIONS ?? '').split(',').map((s) => s.trim())) {
    if (!entry) continue;
    const m = /^([a-z0-9-]+)=([^/\s]*)\/([^/\s]+)$/.exec(entry);
    if (!m) {
      problems.push(`KUBERNETES_REGIONS: '${entry}' must look like region=context/namespace`);
      continue;
    }
    const [, region, context, ns] = m as unknown as [string, string, string, string];
    if (!regions.includes(region)) problems.push(`KUBERNETES_REGIONS: '${region}' is not in REGIONS`);
    if (!NAME.test(ns)) problems.push(`KUBERNETES_REGIONS: '${ns}' is not a namespace name`);
    drivers[region] = { kind: 'kubernetes', ...(context ? { context } : {}), namespace: ns };
  }
  const kube = Object.entries(drivers).filter(([, d]) => d.kind === 'kubernetes');
  if (kube.length && !databaseUrl)
    problems.push(
      `DATABASE_URL: the Kubernetes driver (region ${kube.map(([r]) => r).join(', ')}) needs PostgreSQL; ` +
        'PGlite lives inside Pier’s own process and cannot serve apps running in a cluster',
    );
  let tls: KubernetesSettings['tls'] = null;
  if (env.KUBERNETES_TLS) {
    const t = /^(secret|issuer):(.+)$/.exec(env.KUBERNETES_TLS);
    if (!t) problems.push('KUBERNETES_TLS: must be secret:<name> or issuer:<name>');
    else tls = t[1] === 'secret' ? { secretName: t[2]! } : { clusterIssuer: t[2]! };
  }
  let dbHost = env.KUBERNETES_DATABASE_HOST;
  if (!dbHost && databaseUrl)
    try {
      dbHost = new URL(databaseUrl).hostname;
    } catch {
      // DATABASE_URL's own check reports it.
    }
  const cidr =
    env.KUBERNETES_DATABASE_CIDR ??
    (dbHost && /^\d+\.\d+\.\d+\.\d+$/.test(dbHost) ? `${dbHost}/32` : undefined);
  return {
    problems,
    runtime: {
      drivers,
      kubernetes: {
        kubeconfig: env.KUBECONFIG,
        tls,
        ingressClassName: env.KUBERNETES_INGRESS_CLASS,
        ingressNamespace: env.KUBERNETES_INGRESS_NAMESPACE ?? 'ingress-nginx',
        databaseHost: dbHost,
        databaseCidr: cidr,
      },
    },
  };
}
