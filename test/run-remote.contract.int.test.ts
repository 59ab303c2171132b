/**
 * The Run contract against the remote run: a RemoteRun over the real broker and registry, decided
 * by a guard worker (the service) in this process, on topics of its own.
 */
import { describeRunContract } from './run-contract.js';
import { inProcessService } from './support/service/in-process-service.js';

describeRunContract(
  'remote run over Kafka and the service',
  async () => {
    const cleanups: Array<() => Promise<void>> = [];
    const { guard } = await inProcessService('run-contract', cleanups);
    return {
      startRun: (runId) => guard.startRun({ runId }),
      resume: (runId, change) => guard.resume(runId, change),
      close: async () => {
        for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
      },
    };
  },
  { timeoutMs: 120_000, hookTimeoutMs: 180_000 },
);
