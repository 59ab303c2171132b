/**
 * File-backed schema store for the embedded mode. Lock-free and safe across processes:
 *   ids/<id>.json          the schema text; created by link(2) from a temp file, which fails if
 *                          the id is taken, so an id is claimed atomically and never half-written
 *   by-hash/<sha256>       the id of that text; also created by link(2): the first process to
 *                          link it decides the id, so equal texts get one id even under races
 *   subjects/<subject>/<id> empty markers: which ids a subject has registered
 * A process that loses the by-hash race leaves an orphan id file holding the same text; it is
 * harmless (it resolves to the same schema) and keeps ids dense enough.
 */
import { createHash, randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { normalizeSchema, type SchemaStore, unknownSchema } from './schema-store.js';

/** What a read-only store answers for a schema it does not hold: no real id is 0. */
export const NOT_REGISTERED = 0;

const isCode = (e: unknown, code: string): boolean => (e as NodeJS.ErrnoException)?.code === code;

export class FileSchemaStore implements SchemaStore {
  private readonly cache = new Map<number, string>();
  private ready: Promise<void> | undefined;

  /**
   * `readOnly`: nothing is ever written. `register` then only looks a schema up and answers
   * NOT_REGISTERED for one that is not there: a reader decodes by the ids in the records and never
   * encodes with its own.
   */
  constructor(
    private readonly dir: string,
    private readonly opts: { readonly readOnly?: boolean } = {},
  ) {}

  async register(subject: string, schema: string): Promise<number> {
    const text = normalizeSchema(schema);
    const hashFile = join(this.dir, 'by-hash', createHash('sha256').update(text).digest('hex'));
    if (this.opts.readOnly) return (await this.readId(hashFile)) ?? NOT_REGISTERED;
    await this.init();
    const id = (await this.readId(hashFile)) ?? (await this.claim(text, hashFile));
    const marker = join(this.dir, 'subjects', encodeURIComponent(subject));
    await mkdir(marker, { recursive: true });
    await writeFile(join(marker, String(id)), '', { flag: 'a' });
    return id;
  }

  async schemaById(id: number): Promise<string> {
    const hit = this.cache.get(id);
    if (hit !== undefined) return hit;
    try {
      const text = await readFile(join(this.dir, 'ids', `${id}.json`), 'utf8');
      this.cache.set(id, text);
      return text;
    } catch (e) {
      if (isCode(e, 'ENOENT')) throw unknownSchema(id);
      throw e;
    }
  }

  /** Ids registered under a subject, oldest first. */
  async versions(subject: string): Promise<number[]> {
    try {
      const names = await readdir(join(this.dir, 'subjects', encodeURIComponent(subject)));
      return names.map(Number).sort((a, b) => a - b);
    } catch (e) {
      if (isCode(e, 'ENOENT')) return [];
      throw e;
    }
  }

  private init(): Promise<void> {
    this.ready ??= Promise.all(
      ['ids', 'by-hash', 'subjects', 'tmp'].map((d) => mkdir(join(this.dir, d), { recursive: true })),
    ).then(() => undefined);
    return this.ready;
  }

  private async readId(hashFile: string): Promise<number | undefined> {
    try {
      return Number(await readFile(hashFile, 'utf8'));
    } catch (e) {
      if (isCode(e, 'ENOENT')) return undefined;
      throw e;
    }
  }

  private async claim(text: string, hashFile: string): Promise<number> {
    const tmp = join(this.dir, 'tmp', randomUUID());
    await writeFile(tmp, text);
    try {
      let id = await this.nextFreeId();
      for (;;) {
        try {
          await link(tmp, join(this.dir, 'ids', `${id}.json`));
          break;
        } catch (e) {
          if (!isCode(e, 'EEXIST')) throw e;
          id += 1;
        }
      }
      // A second temp file: `tmp` is now the id file's inode and must not be rewritten.
      const idTmp = `${tmp}.id`;
      await writeFile(idTmp, String(id));
      try {
        await link(idTmp, hashFile);
        this.cache.set(id, text);
        return id;
      } catch (e) {
        if (!isCode(e, 'EEXIST')) throw e;
        const winner = await this.readId(hashFile);
        if (winner === undefined) throw e;
        return winner;
      } finally {
        await unlink(idTmp).catch(() => undefined);
      }
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  private async nextFreeId(): Promise<number> {
    const names = await readdir(join(this.dir, 'ids'));
    return names.reduce((max, n) => Math.max(max, Number.parseInt(n, 10) || 0), 0) + 1;
  }
}
