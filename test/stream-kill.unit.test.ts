/**
 * A SIGKILL at every step boundary of recording a run never loses nor repeats a stop or a ledger
 * copy: whichever step the writer died after, the next writer's projector derives exactly the
 * copies the runs topic calls for.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';
import { SqliteSchemaStore } from '../src/log/embedded/sqlite-schema-store.js';
import { TOPICS } from '../src/log/event-log.js';
import { EventStore } from '../src/log/event-store.js';
import { LogRunStream } from '../src/log/log-run-stream.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';
import { captureIo } from './support/capture-io.js';
import { runEvents } from './support/run-events.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STOPS = SAMPLE_EVENTS.filter((e) => e.type === 'RunStopped').length;
const LEDGER = SAMPLE_EVENTS.filter((e) => e.type.startsWith('Operation')).length;

function writer(dir: string, killAt: string): Promise<NodeJS.Signals | number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/stream-kill-writer.ts', dir, killAt], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
}

async function copiesOf(dir: string, runId: string) {
  const log = await EmbeddedLog.open(dir, { readOnly: true });
  try {
    const of = async (topic: string) => {
      const events = await EventStore.create(log, new SqliteSchemaStore(dir, { readOnly: true }));
      const out: string[] = [];
      for (const r of await log.read(topic, 0)) {
        const e = await events.decode(topic as typeof TOPICS.stops, r.value);
        if (e.runId === runId) out.push(e.eventId);
      }
      return out;
    };
    return {
      stops: await of(TOPICS.stops),
      ledger: await of(TOPICS.ledger),
      runs: (await log.read(TOPICS.runs, 0)).length,
    };
  } finally {
    await log.close();
  }
}

describe('a writer killed at every step boundary', () => {
  for (const step of ['runs-durable', 'stops-published', 'ledger-published', 'none']) {
    it(`after ${step}: the next writer leaves exactly one copy of each stop and ledger event`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'lg-kill-'));
      try {
        expect(await writer(dir, step)).toBe(step === 'none' ? 0 : 'SIGKILL');
        // Before any writer comes back, a reader already sees each stop once.
        const io = captureIo();
        expect(await main(['stops', '--json', '--data-dir', dir], io)).toBe(0);
        const shown = io
          .stdout()
          .trim()
          .split('\n')
          .filter((l) => l.includes('"victim"'));
        expect(shown).toHaveLength(STOPS);
        const log = await EmbeddedLog.open(dir);
        const events = await EventStore.create(log, new SqliteSchemaStore(dir));
        const stream = new LogRunStream(events, log);
        // The next writer records another run; its projector picks up wherever the dead one stopped.
        await stream.appendToStream('next', runEvents('next', 0, 1), { expectedStreamVersion: 0 });
        await stream.appendToStream('next', runEvents('next', 1, 1), { expectedStreamVersion: 1 });
        // Copies other than stops are made after the append returns; closing the stream waits for them.
        await stream.close();
        await log.close();
        const copies = await copiesOf(dir, 'victim');
        expect(copies.runs).toBe(SAMPLE_EVENTS.length + 2);
        expect(copies.stops).toHaveLength(STOPS);
        expect(copies.ledger).toHaveLength(LEDGER);
        expect(new Set([...copies.stops, ...copies.ledger]).size).toBe(STOPS + LEDGER);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }, 30_000);
  }
});
