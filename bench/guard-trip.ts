/**
 * The service benchmarks' round trip: one request -> decision per step of a run, as an agent
 * drives the guard (step 0 starts the run, then a tool call / tool result pair per new page, so
 * no rule stops it). Remembers which worker last answered each run, for the failover figure.
 */
import type { RemoteGuard } from '../src/client/index.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';
import type { RoundTrip } from './service-load.js';

export function guardTrip(guard: RemoteGuard, lastWorker: Map<string, string>): RoundTrip {
  return async (run, step) => {
    const id = guard.newRequestId();
    const call = Math.ceil(step / 2);
    const req: WireRequest =
      step === 0
        ? emptyRequest(id, run, 'START_RUN', guard.now())
        : step % 2 === 1
          ? {
              ...emptyRequest(id, run, 'TOOL_CALL', guard.now()),
              request_id: `${run}/call-${call}`,
              tool: 'list',
              args_json: JSON.stringify({ page: call }),
            }
          : {
              ...emptyRequest(id, run, 'TOOL_RESULT', guard.now()),
              call_id: `${run}/call-${call}`,
              result_json: JSON.stringify({ page: call }),
            };
    const d = await guard.request(req);
    if (d.decision === 'error') throw new Error(`bench: ${d.error_code}: ${d.message}`);
    lastWorker.set(run, d.worker);
  };
}
