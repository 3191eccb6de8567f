import * as k8s from '@kubernetes/client-node';
import * as apps from 'kubernetes-models/apps/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as core from 'kubernetes-models/v1';

// Checks an object the way a strict API server does, from the official OpenAPI schemas: kubernetes-models'
// validators (types, required fields, formats, enums) and, for unknown fields (which those schemas allow),
// the field lists of @kubernetes/client-node's models, generated from the same OpenAPI document.

type Attr = { baseName: string; type: string };
type ModelClass = { getAttributeTypeMap(): Attr[] };

const MODELS: Record<string, { model: string; validate: (o: unknown) => void }> = {
  'apps/v1/Deployment': {
    model: 'V1Deployment',
    validate: (o) => new apps.Deployment(o as never).validate(),
  },
  'v1/Service': { model: 'V1Service', validate: (o) => new core.Service(o as never).validate() },
  'v1/Secret': { model: 'V1Secret', validate: (o) => new core.Secret(o as never).validate() },
  'networking.k8s.io/v1/Ingress': {
    model: 'V1Ingress',
    validate: (o) => new networking.Ingress(o as never).validate(),
  },
  'networking.k8s.io/v1/NetworkPolicy': {
    model: 'V1NetworkPolicy',
    validate: (o) => new networking.NetworkPolicy(o as never).validate(),
  },
};

export const KNOWN_KINDS = Object.keys(MODELS);

function unknownFields(value: unknown, type: string, at: string, out: string[]): void {
  if (value === null || value === undefined) return;
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) {
    if (Array.isArray(value))
      for (const [i, v] of value.entries()) unknownFields(v, arr[1]!, `${at}[${i}]`, out);
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value === 'object')
      for (const [k, v] of Object.entries(value)) unknownFields(v, map[1]!, `${at}.${k}`, out);
    return;
  }
  const cls = (k8s as unknown as Record<string, ModelClass | undefined>)[type];
  if (!cls?.getAttributeTypeMap || typeof value !== 'object' || Array.isArray(value)) return;
  const attrs = new Map(cls.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(value)) {
    const t = attrs.get(k);
    if (!t) out.push(`${at ? `${at}.` : ''}${k}`);
    else unknownFields(v, t, at ? `${at}.${k}` : k, out);
  }
}

/** The problems a strict API server would answer 422 for; empty when the object is valid. */
export function schemaProblems(obj: { apiVersion?: string; kind?: string }): string[] {
  const entry = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!entry) return [`no schema for ${obj.apiVersion}/${obj.kind}`];
  const out: string[] = [];
  unknownFields(obj, entry.model, '', out);
  const problems = out.map((f) => `unknown field "${f}"`);
  try {
    entry.validate(obj);
  } catch (err) {
    problems.push(String((err as Error).message));
  }
  return problems;
}
