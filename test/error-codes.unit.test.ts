import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  ERROR_CODES,
  type ErrorCode,
  errorOf,
  familyOf,
  IllegalStateError,
  InvalidInputError,
  isErrorCode,
  LoopguardError,
  toLoopguardError,
  UnavailableError,
} from '../src/domain/errors.js';

const root = join(import.meta.dirname, '..');
const TABLE_FILE = join('src', 'domain', 'error-codes.ts');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) return sources(rel);
    return rel.endsWith('.ts') && rel !== TABLE_FILE ? [rel] : [];
  });
}

const SRC = sources('src').map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

/** Every place src names a code it raises: a constructor, a factory or a helper that takes one. */
const RAISE =
  /(?:new (?:LoopguardError|ConflictError|InvalidInputError|IllegalStateError|UnavailableError)|errorOf|inputError|toLoopguardError\([^,()]+,)\(?\s*'([a-z_]+)'/g;

describe('ERROR_CODES is the one code table', () => {
  it('holds every code src raises', () => {
    const raised = SRC.flatMap(({ file, text }) =>
      [...text.matchAll(RAISE)].map((m) => ({ file, code: m[1] ?? '' })),
    );
    // `fail` of the decider (src/domain); the synthetic eval has a `fail` of its own for tool results.
    for (const { file, text } of SRC.filter((s) => s.file.startsWith(join('src', 'domain'))))
      for (const m of text.matchAll(/\bfail\(\s*'([a-z_]+)'/g)) raised.push({ file, code: m[1] ?? '' });
    expect(raised.length).toBeGreaterThan(100);
    expect(raised.filter((r) => !isErrorCode(r.code))).toEqual([]);
  });

  it('keeps no code that nothing in src names', () => {
    const all = SRC.map((s) => s.text).join('\n');
    expect(CODES.filter((code) => !all.includes(`'${code}'`))).toEqual([]);
  });

  it('raises a family code through its subclass, never through the base class', () => {
    const base = SRC.flatMap(({ file, text }) =>
      [...text.matchAll(/new LoopguardError\(\s*'([a-z_]+)'/g)].map((m) => ({
        file,
        code: m[1] as ErrorCode,
      })),
    );
    expect(base.filter((r) => familyOf(r.code) !== 'other')).toEqual([]);
  });

  it('gives every code a meaning', () => {
    for (const code of CODES) expect(ERROR_CODES[code].meaning.length, code).toBeGreaterThan(10);
  });
});

describe('LoopguardError', () => {
  it('takes retriable from the table unless the throw site says otherwise', () => {
    expect(new LoopguardError('usage', 'x').retriable).toBe(false);
    expect(new UnavailableError('kafka_unavailable', 'x').retriable).toBe(true);
    expect(new UnavailableError('kafka_unavailable', 'x', { retriable: false }).retriable).toBe(false);
    expect(toLoopguardError(new Error('boom'), 'schema_store_unavailable').retriable).toBe(true);
    expect(toLoopguardError(new Error('boom')).code).toBe('internal');
    for (const code of CODES) expect(errorOf(code, 'x').retriable, code).toBe(ERROR_CODES[code].retriable);
  });

  it('subclasses stay LoopguardErrors with the same code', () => {
    const cases: [LoopguardError, new (...a: never[]) => LoopguardError][] = [
      [new ConflictError('conflict', 'x'), ConflictError],
      [new InvalidInputError('invalid_call', 'req.tool', 'x'), InvalidInputError],
      [new IllegalStateError('illegal_transition', 'x'), IllegalStateError],
      [new UnavailableError('store_busy', 'x'), UnavailableError],
    ];
    for (const [e, cls] of cases) {
      expect(e).toBeInstanceOf(cls);
      expect(e).toBeInstanceOf(LoopguardError);
      expect(e).toBeInstanceOf(Error);
      expect(e.name).toBe('LoopguardError');
    }
    expect(cases.map(([e]) => e.code)).toEqual([
      'conflict',
      'invalid_call',
      'illegal_transition',
      'store_busy',
    ]);
  });

  it('an invalid input names its field, also in details', () => {
    const e = new InvalidInputError('bad_request', 'run_id', 'run_id: blank', {
      details: { requestId: 'r' },
    });
    expect(e.field).toBe('run_id');
    expect(e.details).toEqual({ requestId: 'r', field: 'run_id' });
  });

  it('errorOf builds the class of the code family, so a rewrap keeps it', () => {
    expect(errorOf('run_exists', 'x')).toBeInstanceOf(ConflictError);
    expect(errorOf('run_not_started', 'x')).toBeInstanceOf(IllegalStateError);
    expect(errorOf('log_unavailable', 'x')).toBeInstanceOf(UnavailableError);
    expect(errorOf('usage', 'x').constructor).toBe(LoopguardError);
    const input = errorOf('invalid_input', 'x', { details: { field: 'why.reason' } });
    expect(input).toBeInstanceOf(InvalidInputError);
    expect((input as InvalidInputError).field).toBe('why.reason');
  });
});

describe('the README lists the table', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n### Error codes\n');
  const section = readme.slice(start, readme.indexOf('\n#', start + 5));
  const rows = new Map(
    [...section.matchAll(/^\| `([a-z_]+)` \| (\w+) \| (yes|no) \|/gm)].map((m) => [
      m[1],
      { family: m[2], retriable: m[3] },
    ]),
  );

  it('has one row per code, with its family and retriable flag', () => {
    expect(start).toBeGreaterThan(0);
    expect([...rows.keys()].sort()).toEqual([...CODES].sort());
    for (const code of CODES)
      expect(rows.get(code), code).toEqual({
        family: ERROR_CODES[code].family,
        retriable: ERROR_CODES[code].retriable ? 'yes' : 'no',
      });
  });
});
