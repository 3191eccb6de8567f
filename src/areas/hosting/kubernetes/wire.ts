import { loadYaml } from '@kubernetes/client-node';

// @kubernetes/client-node serializes a body through its own model classes, whose property names differ from the
// wire names in places (`from` is `_from`): a plain wire-format object given to it loses those fields silently
// (a NetworkPolicy rule without `from` lets everything in). So every object goes through the client's own
// deserializer first; JSON is YAML, and loadYaml is its public entry point.
export function clientModel<T extends { apiVersion?: string; kind?: string }>(obj: T): T {
  return loadYaml<T>(JSON.stringify(obj));
}
