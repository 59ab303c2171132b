/**
 * The SchemaStore port's contract, run against every adapter: MemorySchemaStore and
 * SqliteSchemaStore (unit), RegistrySchemaStore on the real registry (int). Ids are global: the
 * same schema text (whatever its whitespace) gets the same id under any subject, distinct texts
 * get distinct ids, and an id gives its schema back. Each test registers under subjects and
 * record names of its own, so a shared registry never sees a version that clashes with another.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { LoopguardError } from '../src/domain/errors.js';
import type { SchemaStore } from '../src/ports/schema-store.js';

export interface SchemaStoreFixture {
  readonly store: SchemaStore;
  /** Another store over the same ids (another process's), or the same store where there is no other. */
  other(): SchemaStore;
  close(): Promise<void>;
}

export function schemaStoreContract(name: string, make: () => Promise<SchemaStoreFixture>): void {
  describe(`SchemaStore contract: ${name}`, () => {
    const open: SchemaStoreFixture[] = [];
    const fixture = async () => {
      const f = await make();
      open.push(f);
      return f;
    };
    afterEach(async () => {
      for (const f of open.splice(0)) await f.close();
    });
    const tag = () => randomUUID().replaceAll('-', '');
    const schema = (name: string): string =>
      JSON.stringify({ type: 'record', name, fields: [{ name: 'x', type: 'int' }] });

    it('gives one global id per schema text, whatever the subject or whitespace', async () => {
      const { store, other } = await fixture();
      const t = tag();
      const one = schema(`A${t}`);
      const two = schema(`B${t}`);
      const a = await store.register(`a-${t}-value`, one);
      const b = await store.register(`b-${t}-value`, two);
      expect(b).not.toBe(a);
      expect(await store.register(`c-${t}-value`, `  ${one}\n`)).toBe(a);
      expect(await store.register(`a-${t}-value`, one)).toBe(a);
      expect(JSON.parse(await store.schemaById(b))).toEqual(JSON.parse(two));
      const elsewhere = other();
      expect(JSON.parse(await elsewhere.schemaById(a))).toEqual(JSON.parse(one));
      expect(await elsewhere.register(`d-${t}-value`, one)).toBe(a);
    });

    it('rejects an unknown id with unknown_schema and a schema that is not JSON', async () => {
      const { store } = await fixture();
      await expect(store.schemaById(0x7fff_fff0)).rejects.toMatchObject({ code: 'unknown_schema' });
      await expect(store.register(`e-${tag()}-value`, '{nope')).rejects.toBeInstanceOf(LoopguardError);
    });
  });
}
