import type { TraceCall } from '../trace/trace-run.js';

/**
 * JSON with object keys sorted at every depth (arrays keep their order), so two argument objects
 * that differ only in key order serialize identically. `undefined` members are dropped, as
 * JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}

/** A call's identity: its tool name and its arguments as canonical JSON. */
export function callIdentity(call: Pick<TraceCall, 'tool' | 'args'>): string {
  return `${JSON.stringify(call.tool)}:${canonicalJson(call.args)}`;
}
