import { KafkaCopyProjector } from '../log/kafka/kafka-copy-projector.js';
import { untilAborted } from './command-context.js';
import type { Io } from './io.js';
import type { KafkaConfig } from './kafka-config.js';
import { openKafkaStore } from './open-kafka-store.js';

/**
 * `loopguard project --kafka [--once]`: the copy projector on its own, until the signal aborts
 * (SIGINT, SIGTERM), another projector of the group takes over (the newer one copies), or with
 * `--once` until what the runs topic held at the start is copied. `alert --kafka` runs the same
 * projector beside its subscriber; a crashed projector's work is resumed exactly where it committed.
 */
export async function projectCommand(
  cfg: KafkaConfig,
  once: boolean,
  io: Io,
  signal: AbortSignal,
): Promise<number> {
  const store = await openKafkaStore(cfg);
  try {
    const projector = await KafkaCopyProjector.start({
      log: store.log,
      events: store.events,
      onLog: (line) => io.err(line),
    });
    io.err(`project: copying ${store.log.physicalName('loopguard.runs')} to its stops and ledger topics`);
    try {
      if (once) await projector.caughtUp();
      else
        await Promise.race([projector.ended.then((why) => io.err(`project: ${why}`)), untilAborted(signal)]);
    } finally {
      await projector.stop();
    }
    io.err(`project: stopped after ${projector.copied} copies`);
    return 0;
  } finally {
    await store.close();
  }
}
