/**
 * Records keyed by what users name (tools, operation keys, task types) must never answer with what
 * every object inherits: `perTool["constructor"]` is a function and `asked["__proto__"]` is
 * Object.prototype. Reads go through `own`; writes by computed key or spread already define an
 * own property, and `dict` starts a record that has no prototype at all.
 */
export const own = <V>(rec: Readonly<Record<string, V>>, key: string): V | undefined =>
  Object.hasOwn(rec, key) ? rec[key] : undefined;

/** An empty record with no prototype: assigning `out["__proto__"] = v` stores v instead of dropping it. */
export const dict = <V>(): Record<string, V> => Object.create(null) as Record<string, V>;
