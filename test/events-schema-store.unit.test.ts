import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { schemaStoreContract } from './schema-store-contract.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const schema = (n: number): string =>
  JSON.stringify({ type: 'record', name: `R${n}`, fields: [{ name: 'x', type: 'int' }] });

schemaStoreContract('memory', async () => {
  const store = new MemorySchemaStore();
  return { store, other: () => store, close: async () => {} };
});

schemaStoreContract('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-schemas-'));
  const stores = [new SqliteSchemaStore(dir)];
  return {
    store: stores[0] as SqliteSchemaStore,
    other: () => {
      const s = new SqliteSchemaStore(dir);
      stores.push(s);
      return s;
    },
    close: async () => {
      for (const s of stores) await s.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('the local schema stores', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lg-schemas-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('assign dense ids from 1', async () => {
    for (const s of [new MemorySchemaStore(), new SqliteSchemaStore(dir)]) {
      expect(await s.register('a-value', schema(1))).toBe(1);
      expect(await s.register('b-value', schema(2))).toBe(2);
    }
  });
});

describe('SqliteSchemaStore across instances and processes', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lg-schemas-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps ids when reopened', async () => {
    const id = await new SqliteSchemaStore(dir).register('s', schema(1));
    const again = new SqliteSchemaStore(dir);
    expect(await again.schemaById(id)).toBe(schema(1));
    expect(await again.register('t', schema(1))).toBe(id);
    expect(await again.versions('s')).toEqual([id]);
  });

  it('gives one id per schema when many instances race', async () => {
    const stores = Array.from({ length: 12 }, () => new SqliteSchemaStore(dir));
    const ids = await Promise.all(
      stores.flatMap((s, i) => [1, 2, 3].map((n) => s.register(`s${i}`, schema(n)))),
    );
    const byText = new Map<number, Set<number>>();
    ids.forEach((id, k) => {
      const n = (k % 3) + 1;
      byText.set(n, (byText.get(n) ?? new Set()).add(id));
    });
    for (const set of byText.values()) expect(set.size).toBe(1);
    expect(new Set(ids).size).toBe(3);
    for (const n of [1, 2, 3])
      expect(await stores[0]?.schemaById([...(byText.get(n) ?? [])][0] as number)).toBe(schema(n));
  });

  it('gives one id per schema when separate processes race', async () => {
    const script = `
      import { SqliteSchemaStore } from './src/log/embedded/sqlite-schema-store.js';
      const s = new SqliteSchemaStore(process.argv[1]);
      const ids = await Promise.all([1, 2, 3, 4].map((n) =>
        s.register('p', JSON.stringify({ type: 'record', name: 'R' + n, fields: [{ name: 'x', type: 'int' }] }))));
      console.log(JSON.stringify(ids));`;
    const outs = await Promise.all(
      Array.from({ length: 4 }, () =>
        run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir], { cwd: ROOT }),
      ),
    );
    const results = outs.map((o) => JSON.parse(o.stdout) as number[]);
    for (const r of results) expect(r).toEqual(results[0]);
    expect(new Set(results[0]).size).toBe(4);
    // Dense ids: no process minted an id that lost a race.
    expect([...(results[0] ?? [])].sort()).toEqual([1, 2, 3, 4]);
    expect(await new SqliteSchemaStore(dir, { readOnly: true }).versions('p')).toEqual([1, 2, 3, 4]);
  }, 30_000);
});
