import { describe, expect, it } from 'vitest';
import {
  type CanonicalCall,
  canonicalCall,
  decide,
  initialState,
  type RunPolicy,
} from '../src/domain/index.js';
import { foldRun } from '../src/machines/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { deps, given, start } from './support/given.js';

const hashing = nodeHashing('test-key');
const canon = (args: unknown, volatileArgs: readonly string[] = [], tool = 'search'): CanonicalCall => {
  const r = canonicalCall(tool, args, hashing, volatileArgs);
  if (!r.ok) throw r.error;
  return r.value;
};
const fp = (args: unknown, volatileArgs: readonly string[] = []) => canon(args, volatileArgs).fingerprint;

describe('canonicalCall: same ask, same fingerprint', () => {
  it('sorts object keys at every depth', () => {
    const a = canon({ q: 'x', filter: { b: 1, a: [{ z: 1, y: 2 }] } });
    const b = canon({ filter: { a: [{ y: 2, z: 1 }], b: 1 }, q: 'x' });
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.argsJson).toBe('{"filter":{"a":[{"y":2,"z":1}],"b":1},"q":"x"}');
  });

  it('trims strings, so whitespace jitter is the same call', () => {
    expect(fp({ q: '  refund policy \n' })).toBe(fp({ q: 'refund policy' }));
    expect(fp({ nested: { q: '\tx ' } })).toBe(fp({ nested: { q: 'x' } }));
  });

  it('tool name is part of the fingerprint', () => {
    expect(canon({ q: 'x' }, [], 'search').fingerprint).not.toBe(canon({ q: 'x' }, [], 'lookup').fingerprint);
  });

  it('drops well-known volatile fields: timestamp, request_id/requestId, trace_id, nonce', () => {
    const plain = canon({ q: 'x' });
    const noisy = canon({
      q: 'x',
      timestamp: 123,
      request_id: 'r1',
      requestId: 'r2',
      trace_id: 't',
      nonce: 'n',
      meta: { timestamp: 5 },
    });
    const noisier = canon({
      q: 'x',
      timestamp: 999,
      request_id: 'other',
      nonce: 'm',
      meta: { timestamp: 6 },
    });
    expect(noisy.argsJson).toBe('{"meta":{},"q":"x"}');
    expect(noisy.fingerprint).toBe(noisier.fingerprint);
    expect(canon({ q: 'x', timestamp: 1 }).fingerprint).toBe(plain.fingerprint);
  });

  it("drops the tool policy's volatileArgs", () => {
    expect(fp({ q: 'x', session: 'abc' }, ['session'])).toBe(fp({ q: 'x', session: 'def' }, ['session']));
    expect(fp({ q: 'x', session: 'abc' })).not.toBe(fp({ q: 'x', session: 'def' }));
  });

  it('page, cursor, offset, version and id changes give a different fingerprint', () => {
    for (const key of ['page', 'cursor', 'offset', 'version', 'id']) {
      expect(fp({ q: 'x', [key]: 1 }), key).not.toBe(fp({ q: 'x', [key]: 2 }));
    }
  });
});

describe('canonicalCall: secrets', () => {
  const secrets = [
    'token',
    'access_token',
    'secret',
    'password',
    'authorization',
    'api_key',
    'apiKey',
    'cookie',
  ];

  it.each(secrets)('never shows %s in plain text', (key) => {
    const c = canon({ q: 'x', [key]: 'hunter2-SECRET-VALUE', headers: { [key]: 'nested-SECRET-VALUE' } });
    expect(c.argsJson).not.toContain('SECRET-VALUE');
    expect(c.argsJson).toContain(`"${key}":"redacted:`);
  });

  it('equal secrets give equal fingerprints, different ones different', () => {
    expect(fp({ q: 'x', api_key: 'k1' })).toBe(fp({ q: 'x', api_key: 'k1' }));
    expect(fp({ q: 'x', api_key: 'k1' })).not.toBe(fp({ q: 'x', api_key: 'k2' }));
  });

  it('a different hashing key gives a different hash of the same secret', () => {
    const a = canonicalCall('s', { password: 'p' }, nodeHashing('key-a'));
    const b = canonicalCall('s', { password: 'p' }, nodeHashing('key-b'));
    if (!a.ok || !b.ok) throw new Error('expected ok');
    expect(a.value.argsJson).not.toBe(b.value.argsJson);
  });

  it('does not redact max_tokens (a count, not a secret)', () => {
    const c = canon({ q: 'x', max_tokens: 512, maxTokens: 256 });
    expect(c.argsJson).toBe('{"maxTokens":256,"max_tokens":512,"q":"x"}');
  });

  it('the secret never reaches a recorded event', () => {
    const o = given(start()).when({
      type: 'RequestToolCall',
      callId: 'c1',
      tool: 'http',
      args: { url: 'https://x', headers: { Authorization: 'Bearer sk-live-123' } },
    });
    expect(JSON.stringify(o.events)).not.toContain('sk-live-123');
    expect(o.before.decision).toBe('execute');
  });
});

describe('canonicalCall: non-JSON input is an error value, not a throw', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const cases: [string, unknown, string][] = [
    ['a cycle', { outer: cyclic }, 'args.outer.self'],
    ['a BigInt', { n: 10n }, 'args.n'],
    ['a function', { f: () => 1 }, 'args.f'],
    ['NaN', { list: [1, Number.NaN] }, 'args.list[1]'],
    ['Infinity', { x: { y: Number.POSITIVE_INFINITY } }, 'args.x.y'],
    ['a Map', { m: new Map([[1, 2]]) }, 'args.m'],
    ['a class instance', { v: new (class Point {})() }, 'args.v'],
  ];

  it.each(cases)('%s gives invalid_args naming the path', (_what, args, path) => {
    let r: ReturnType<typeof canonicalCall> | undefined;
    expect(() => {
      r = canonicalCall('t', args, hashing);
    }).not.toThrow();
    expect(r?.ok).toBe(false);
    if (r === undefined || r.ok) return;
    expect(r.error.code).toBe('invalid_args');
    expect(r.error.message.startsWith(`${path}:`)).toBe(true);
    expect(r.error.details.field).toBe(path);
  });

  it('the decider answers a non-JSON request with an invalid_args error and no events', () => {
    const s = given(start());
    const o = s.when({ type: 'RequestToolCall', callId: 'c1', tool: 't', args: { n: 1n } });
    expect(o.error?.code).toBe('invalid_args');
    expect(o.events).toEqual([]);
    expect(s.state.toolCalls).toBe(0);
    const direct = decide(
      initialState('r'),
      { type: 'StartRun', runId: 'r', policy: s.state.policy as RunPolicy, atMs: 0 },
      deps,
      foldRun,
    );
    expect(direct.ok).toBe(true);
  });
});

describe('intentOf', () => {
  it('drops paging and id fields in any spelling, keeps everything else', async () => {
    const { intentOf } = await import('../src/domain/intent.js');
    expect(intentOf('{"pAge":2,"q":"x"}')).toBe('{"q":"x"}');
    expect(intentOf('{"nextPageToken":"t","user_id":7,"userId":8,"q":"x"}')).toBe('{"q":"x"}');
    expect(intentOf('{"limit":20,"query":"refund policy"}')).toBe('{"limit":20,"query":"refund policy"}');
    expect(intentOf('{"q":"the page: 2"}')).toBe('{"q":"the page: 2"}');
    // Names compare without case or punctuation, whatever the JSON text looks like.
    expect(intentOf('{"off-set":0,"q":"refund"}')).toBe('{"q":"refund"}');
    expect(intentOf('{"P.A.G.E":3,"q":"x"}')).toBe('{"q":"x"}');
    expect(intentOf(JSON.stringify({ 'i\nd': 1, q: 'x' }))).toBe('{"q":"x"}');
  });

  it('is the intent canonicalCall and the fold see: one function of the arguments text', async () => {
    const { intentOf } = await import('../src/domain/intent.js');
    const call = canonicalCall('search', { 'off-set': 0, q: ' refund ' }, deps.hashing);
    if (!call.ok) throw call.error;
    expect(intentOf(call.value.argsJson)).toBe('{"q":"refund"}');
  });
});

describe('intentOf without parsing', () => {
  it('gives what parsing gives, for every text JSON.stringify writes', async () => {
    const fc = await import('fast-check');
    const { intentByParse, intentOf } = await import('../src/domain/intent.js');
    const key = fc.oneof(
      fc.constantFrom(
        'page',
        'offset',
        'off-set',
        'user_id',
        'userId',
        'q',
        'query',
        'limit',
        '__proto__',
        '10',
        '9',
      ),
      fc.string(),
    );
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.dictionary(key, value), (args) => {
        const json = JSON.stringify(args);
        expect(intentOf(json)).toBe(intentByParse(json));
      }),
      { numRuns: 3000 },
    );
    expect(intentOf('{"page":1,"q":{"b":1,"1":2}}')).toBe(intentByParse('{"page":1,"q":{"b":1,"1":2}}'));
    expect(intentOf('{"page": 1, "q": "x"}')).toBe('{"q":"x"}');
  });
});

describe('canonical JSON written as it is walked', () => {
  it('is JSON.stringify of the canonical value built in sorted key order (index keys first, holes null)', async () => {
    const fc = await import('fast-check');
    const { isSecretKey, normalisedKey, redactedMark, redactText } = await import('../src/domain/redact.js');
    const VOLATILE = [
      'timestamp',
      'ts',
      'requestid',
      'traceid',
      'spanid',
      'nonce',
      'correlationid',
      'requesttime',
      'sentat',
      'clientrequestid',
    ];
    // The definition: the canonical value as an object built key by key in sorted order, then stringified.
    const canonical = (v: unknown): unknown => {
      if (typeof v === 'string') return redactText(v.trim(), hashing);
      if (typeof v !== 'object' || v === null) return Object.is(v, -0) ? 0 : v;
      if (Array.isArray(v)) return v.map(canonical);
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        if (VOLATILE.includes(normalisedKey(k))) continue;
        const c = canonical((v as Record<string, unknown>)[k]);
        Object.defineProperty(out, k, {
          value: isSecretKey(k) ? redactedMark(JSON.stringify(c), hashing) : c,
          enumerable: true,
        });
      }
      return out;
    };
    const key = fc.oneof(
      fc.constantFrom('10', '9', '0', '01', '4294967295', '4294967294', '__proto__', 'token'),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue({ maxDepth: 3 })), (args) => {
        expect(canon(args).argsJson).toBe(JSON.stringify(canonical(args)));
      }),
      { numRuns: 2000 },
    );
    // biome-ignore lint/suspicious/noSparseArray: a hole, which JSON writes as null
    expect(canon({ a: [1, , 2] }).argsJson).toBe('{"a":[1,null,2]}');
  });
});

describe('isPagingKey', () => {
  it('is its definition: a paging name, or a name ending in Id, or in id after the start or an underscore (any case)', async () => {
    const fc = await import('fast-check');
    const { isPagingKey, PAGING } = await import('../src/domain/intent.js');
    const { normalisedKey } = await import('../src/domain/redact.js');
    const definition = (k: string) => PAGING.has(normalisedKey(k)) || /(^|_)id$/i.test(k) || /Id$/.test(k);
    const key = fc.oneof(
      fc.constantFrom(
        'id',
        'ID',
        'iD',
        'Id',
        'userId',
        'user_id',
        'user_ID',
        'userid',
        'paid',
        'xId',
        'ıd',
        'İd',
        '_id',
        'd',
        '',
      ),
      fc.string(),
      fc.stringMatching(/^[a-zA-Z_]{0,4}[iI][dD]$/),
    );
    fc.assert(
      fc.property(key, (k) => {
        expect(isPagingKey(k)).toBe(definition(k));
      }),
      { numRuns: 5000 },
    );
  });
});
