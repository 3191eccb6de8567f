/**
 * A value kept per object — a database handle, the deps of one Pier, a memory context — made on first use
 * and gone with the object (a WeakMap), so two Piers in one process (tests, benches) never share a cache.
 */
export function perObject<K extends object, V>(make: () => V): (key: K) => V {
  const values = new WeakMap<K, V>();
  return (key) => {
    let v = values.get(key);
    if (v === undefined) {
      v = make();
      values.set(key, v);
    }
    return v;
  };
}
