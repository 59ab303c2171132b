/**
 * Secrets never reach the log in plain text: by key name, and by the shape of the value wherever
 * it sits. Each case is one that was found in plain text in a data dir.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalCall, isSecretKey, redactText } from '../src/domain/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { given, start } from './support/given.js';

const hashing = nodeHashing('test-key');
const argsJson = (args: unknown): string => {
  const r = canonicalCall('http', args, hashing);
  if (!r.ok) throw r.error;
  return r.value.argsJson;
};

const SECRET = 'Zq8vR2mT7xK4pL9wN3bY6cF1';

describe('secret key names', () => {
  it.each([
    'token_value',
    'tokenId',
    'access_key',
    'aws_access_key_id',
    'aws_secret_access_key',
    'pwd',
    'passphrase',
    'jwt',
    'session',
    'session_id',
    'signature',
    'ssh_key',
    'private_key',
    'client_secret',
    'refresh_token',
    'X-Api-Key',
  ])('%s is a secret, and its value never appears', (key) => {
    expect(isSecretKey(key)).toBe(true);
    const json = argsJson({ q: 'x', [key]: 'plain-guessable-1' });
    expect(json).not.toContain('plain-guessable-1');
    expect(json).toContain(`"${key}":"redacted:`);
  });

  it.each(['max_tokens', 'tokens', 'query', 'keyword', 'key', 'id', 'page'])(
    '%s is not a secret name',
    (key) => {
      expect(isSecretKey(key)).toBe(false);
    },
  );
});

describe('secret-shaped values under innocuous keys', () => {
  it.each([
    ['a key with a well-known prefix', 'sk-live-4eC39HqLyjWDarjtT1zdp7dc'],
    ['a GitHub token', `ghp_${'a1B2c3D4e5F6g7H8i9J0'}kLmN`],
    ['an AWS key id', 'AKIAIOSFODNN7EXAMPLE'],
    ['a URL query token', 'https://api.example.com/v1/items?limit=5&access_token=hunter2hunter2'],
    ['URL credentials', 'postgres://admin:hunter2@db.example.com:5432/app'],
    ['a cookie header', 'Cookie: session=abc123def456; theme=dark'],
    ['an authorization header', 'Authorization: Basic dXNlcjpodW50ZXIy'],
    ['a bearer token', 'Bearer abcdef1234567890'],
    ['a bearer token in a headers array', 'bearer Zq8vR2mT7xK4pL9wN3bY6cF1'],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
    ['unparsed JSON with a secret key', '{"api_key": "hunter2hunter2", "q": "weather"}'],
    ['key=value text', 'login with password=hunter2hunter2 please'],
    ['a high-entropy string', SECRET],
  ])('%s', (_what, value) => {
    const secretPart =
      /hunter2hunter2|hunter2@|abc123def456|dXNlcjpodW50ZXIy|abcdef1234567890|4eC39HqLyjWDarjtT1zdp7dc|a1B2c3D4e5F6g7H8i9J0|IOSFODNN7EXAMPLE|dozjgNryP4J3jVmNHl0w5N|Zq8vR2mT7xK4pL9wN3bY6cF1/;
    for (const args of [{ q: value }, { headers: [value] }, { nested: { deep: [{ v: value }] } }]) {
      const json = argsJson(args);
      expect(json).not.toMatch(secretPart);
      expect(json).toContain('redacted:');
    }
  });

  it('keeps ordinary text, hex digests, UUIDs and identifiers readable', () => {
    for (const text of [
      'refund policy for order A1',
      'd41d8cd98f00b204e9800998ecf8427e',
      '123e4567-e89b-12d3-a456-426614174000',
      'getUserAccountSettingsV2',
      'sk-learn-models',
      'https://example.com/search?q=weather&page=2',
      'max_tokens=512',
      'Basic Instinct and other basic economy fares',
      'Bearer of bad news',
    ]) {
      expect(redactText(text, hashing)).toBe(text);
    }
  });

  it('equal secrets compare equal, different ones differ, and redacting twice changes nothing', () => {
    const a = redactText(`Bearer ${SECRET}`, hashing);
    expect(redactText(`Bearer ${SECRET}`, hashing)).toBe(a);
    expect(redactText('Bearer Zq8vR2mT7xK4pL9wN3bY6cF2', hashing)).not.toBe(a);
    expect(redactText(a, hashing)).toBe(a);
    const url = redactText('https://x.io/?token=abcdefgh123', hashing);
    expect(redactText(url, hashing)).toBe(url);
  });

  it('redacting twice changes nothing, for any text (operation keys are redacted at both ends)', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom(
        'password=',
        'token: ',
        '"api_key": "',
        'Bearer ',
        'Basic ',
        'Cookie: ',
        'https://u:p@',
        '?access_token=',
        SECRET,
        'sk-live-4eC39HqLyjWDarjtT1zdp7dc',
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig',
        'redacted:',
        ' ',
        ':',
        '=',
      ),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
        const once = redactText(parts.join(''), hashing);
        expect(redactText(once, hashing)).toBe(once);
      }),
      { numRuns: 500 },
    );
  });

  it('a different key gives a different hash, so a guessable secret cannot be confirmed without it', () => {
    expect(redactText('password=hunter2', nodeHashing('key-a'))).not.toBe(
      redactText('password=hunter2', nodeHashing('key-b')),
    );
  });
});

describe('every field that reaches the log', () => {
  it('operation_key, code and the failure detail are redacted', () => {
    const scenario = given(start({ tools: { pay: { sideEffect: true } } }), {
      type: 'RequestToolCall',
      callId: 'c1',
      tool: 'pay',
      args: {},
      sideEffect: true,
      operationKey: `acme:pay:${SECRET}`,
    });
    const done = scenario.when({
      type: 'CompleteToolCall',
      callId: 'c1',
      kind: 'RETRYABLE',
      code: 'Bearer abcdef1234567890',
      resultHash: 'h',
    });
    const failed = scenario.when({ type: 'Fail', reason: 'gave up: password=hunter2hunter2' });
    expect(done.error).toBeNull();
    expect(failed.error).toBeNull();
    const text = JSON.stringify(scenario.history);
    expect(text).not.toMatch(/Zq8vR2mT7xK4pL9wN3bY6cF1|abcdef1234567890|hunter2hunter2/);
    expect(text).toContain('acme:pay:redacted:');
    expect(text).toContain('Bearer redacted:');
  });
});
