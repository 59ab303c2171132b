/**
 * Child process of the embedded-log crash test: appends forever from several concurrent loops and
 * prints `ack <offset> <value>` for every record whose append resolved (i.e. was fsynced), until
 * the parent kills it with SIGKILL. Run: node --import tsx test/log-crash-writer.ts <dir> <topic>
 */
import { EmbeddedLog } from '../src/log/embedded/embedded-log.js';

const [dir, topic] = process.argv.slice(2);
if (dir === undefined || topic === undefined) throw new Error('usage: log-crash-writer <dir> <topic>');
const log = await EmbeddedLog.open(dir);

async function loop(worker: number): Promise<never> {
  for (let n = 0; ; n++) {
    const values = Array.from({ length: 1 + (n % 3) }, (_, i) => `w${worker}-${n}-${i}`);
    const offsets = await log.append(
      topic as string,
      values.map((v) => ({ key: `w${worker}`, value: Buffer.from(v.padEnd(40 + (n % 50), '.')) })),
    );
    // Pipes are synchronous on Linux, so a printed ack has left this process before the next append.
    process.stdout.write(offsets.map((o, i) => `ack ${o} ${values[i]}\n`).join(''));
  }
}

await Promise.all([0, 1, 2, 3].map(loop));
