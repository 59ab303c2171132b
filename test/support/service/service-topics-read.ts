import { openService } from '../../../src/service/open-service.js';
import { SERVICE_TOPICS, type WireDecision, type WireRequest } from '../../../src/service/service-topics.js';

export interface ServiceTopicsContent {
  readonly requests: WireRequest[];
  readonly decisions: WireDecision[];
}

/** Everything committed on the requests and decisions topics of a prefix (read_committed). */
export async function readServiceTopics(
  brokers: readonly string[],
  registryUrl: string,
  topicPrefix: string,
): Promise<ServiceTopicsContent> {
  const conn = await openService({ brokers, registryUrl, topicPrefix });
  try {
    const [req, dec] = await Promise.all([
      conn.log.readAll(SERVICE_TOPICS.requests),
      conn.log.readAll(SERVICE_TOPICS.decisions),
    ]);
    return {
      requests: await Promise.all(req.map((r) => conn.requests.decode(r.value))),
      decisions: await Promise.all(dec.map((r) => conn.decisions.decode(r.value))),
    };
  } finally {
    await conn.close();
  }
}

/** request id -> how many decisions answer it. */
export function decisionCounts(c: ServiceTopicsContent): Map<string, number> {
  const n = new Map<string, number>();
  for (const r of c.requests) n.set(r.request_id, 0);
  for (const d of c.decisions) n.set(d.request_id, (n.get(d.request_id) ?? 0) + 1);
  return n;
}
