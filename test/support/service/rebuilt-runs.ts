/**
 * `loopguard rebuild --kafka --json` over a test's topics, as an operator would run it: the
 * per-run lines it prints (its closing count line left out). It must exit 0.
 */
import { main } from '../../../src/cli/main.js';
import { kafkaEnv } from '../../setup/kafka-env.js';
import { captureIo } from '../capture-io.js';

/** One line of `--json` output: the run id, then its summary fields. */
export type RebuiltRun = { readonly run_id: string } & Readonly<Record<string, unknown>>;

export async function rebuiltRuns(topicPrefix: string): Promise<RebuiltRun[]> {
  const { brokers, registryUrl } = kafkaEnv();
  const io = captureIo();
  const args = ['rebuild', '--kafka', '--brokers', brokers.join(','), '--registry', registryUrl];
  const code = await main([...args, '--topic-prefix', topicPrefix, '--json'], io);
  if (code !== 0) throw new Error(`rebuild exited ${code}: ${io.stderr()}`);
  return io
    .stdout()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Partial<RebuiltRun>)
    .filter((r): r is RebuiltRun => typeof r.run_id === 'string');
}
