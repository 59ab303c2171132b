import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { holderRefusal, LoopguardError } from '../domain/index.js';
import {
  type ClaimOutcome,
  type ClaimOwner,
  type Ledger,
  type LedgerState,
  type ReissueNote,
  reissueRefusal,
} from './ledger.js';

interface ClaimFile {
  readonly key: string;
  readonly owner: ClaimOwner;
  readonly pid: number;
  readonly state: LedgerState;
}

/**
 * Two writes of one file at once (ledgers of one data dir in one process, or in two) must not
 * share a temporary file: random for identity only, never for a decision.
 */
const tempName = (): string => `${process.pid}.${randomUUID()}`;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The embedded ledger: one file per operation key in the data dir, created with O_EXCL so that
 * exactly one process on this machine wins a claim, and replaced by rename so a reader never
 * sees half a file. A claim whose owning process has died without a completion is the crash
 * window: it reads as in doubt, never as free.
 */
export class FileLedger implements Ledger {
  private constructor(private readonly dir: string) {}

  static open(dataDir: string): FileLedger {
    const dir = join(dataDir, 'ledger');
    mkdirSync(dir, { recursive: true });
    return new FileLedger(dir);
  }

  private path(key: string): string {
    return join(this.dir, `${createHash('sha256').update(key).digest('hex').slice(0, 40)}.json`);
  }

  private async read(key: string): Promise<ClaimFile | undefined> {
    try {
      return JSON.parse(await readFile(this.path(key), 'utf8')) as ClaimFile;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  private async replace(key: string, file: ClaimFile): Promise<void> {
    const tmp = `${this.path(key)}.${tempName()}.tmp`;
    await writeFile(tmp, JSON.stringify(file));
    await rename(tmp, this.path(key));
  }

  private async owned(key: string, owner: ClaimOwner): Promise<ClaimFile> {
    const f = await this.read(key);
    const refused = holderRefusal(f?.state, owner);
    if (f === undefined || refused !== null)
      throw new LoopguardError(
        'not_claim_owner',
        `ledger: ${key} is not claimed by ${owner.runId}/${owner.callId} (${refused})`,
      );
    return f;
  }

  async claim(key: string, owner: ClaimOwner): Promise<ClaimOutcome> {
    const file: ClaimFile = { key, owner, pid: process.pid, state: { status: 'claimed', owner } };
    // Written aside, then hard-linked into place: link() fails if the name exists, so creation
    // and content arrive together and exactly one process wins.
    const tmp = `${this.path(key)}.${process.pid}.${owner.callId.replace(/[^\w-]/g, '_')}.claim`;
    await writeFile(tmp, JSON.stringify(file), { flush: true });
    try {
      await link(tmp, this.path(key));
      return { status: 'won' };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await unlink(tmp);
    }
    const f = await this.read(key);
    if (f === undefined) return this.claim(key, owner);
    const s = f.state;
    if (s.status === 'completed') return { status: 'completed', resultJson: s.resultJson };
    if (s.status === 'in_doubt') return { status: 'in_doubt', owner: s.owner };
    return alive(f.pid) ? { status: 'in_flight', owner: s.owner } : { status: 'in_doubt', owner: s.owner };
  }

  async complete(key: string, owner: ClaimOwner, resultJson: string): Promise<void> {
    const f = await this.owned(key, owner);
    await this.replace(key, { ...f, state: { status: 'completed', owner, resultJson } });
  }

  async markInDoubt(key: string, owner: ClaimOwner, reason: string): Promise<void> {
    const f = await this.owned(key, owner);
    await this.replace(key, { ...f, state: { status: 'in_doubt', owner, reason } });
  }

  async release(key: string, owner: ClaimOwner): Promise<void> {
    await this.owned(key, owner);
    await unlink(this.path(key));
  }

  async settle(key: string, happened: boolean, resultJson = 'null'): Promise<void> {
    const f = await this.read(key);
    // A completion is final: settling never frees a side effect that is known to have happened.
    if (f === undefined || f.state.status === 'completed') return;
    if (happened)
      await this.replace(key, { ...f, state: { status: 'completed', owner: f.owner, resultJson } });
    else await unlink(this.path(key));
  }

  async get(key: string): Promise<LedgerState | undefined> {
    const f = await this.read(key);
    if (f === undefined) return undefined;
    if (f.state.status === 'claimed' && !alive(f.pid))
      return { status: 'in_doubt', owner: f.owner, reason: 'owner process ended without recording a result' };
    return f.state;
  }

  async reissue(note: ReissueNote): Promise<void> {
    const refused = reissueRefusal(
      note,
      await this.get(note.oldKey),
      (await this.get(note.newKey)) ?? (await this.reissuedFrom(note.newKey)),
    );
    if (refused !== null) throw new LoopguardError('reissue_refused', `reissue: ${refused}`);
    // Linked into place like a claim, so two operators cannot both reissue onto one key.
    const tmp = `${this.notePath(note.newKey)}.${tempName()}.tmp`;
    await writeFile(tmp, JSON.stringify(note), { flush: true });
    try {
      await link(tmp, this.notePath(note.newKey));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      throw new LoopguardError('reissue_refused', `reissue: operation key ${note.newKey} is already in use`);
    } finally {
      await unlink(tmp);
    }
  }

  async reissuedFrom(newKey: string): Promise<ReissueNote | undefined> {
    try {
      return JSON.parse(await readFile(this.notePath(newKey), 'utf8')) as ReissueNote;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  private notePath(key: string): string {
    return this.path(key).replace(/\.json$/, '.reissue.json');
  }

  async close(): Promise<void> {}
}
