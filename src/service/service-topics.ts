/**
 * The service's topics and wire types. Requests and decisions are keyed by run id, so one
 * partition carries a run's requests in order and the worker that owns it is the run's only
 * writer; the decisions topic has as many partitions as the requests topic.
 */
export const SERVICE_TOPICS = {
  requests: 'loopguard.requests',
  decisions: 'loopguard.decisions',
  /** Workers' partition snapshots (partition-snapshots.ts): what a takeover loads before the tail. */
  snapshots: 'loopguard.worker-snapshots',
} as const;

/** A client may name its request here too, so even an undecodable one gets its error decision. */
export const REQUEST_ID_HEADER = 'loopguard.request_id';

/** Default partitions of requests, decisions and runs: they bound how many workers share the load. */
export const DEFAULT_SERVICE_PARTITIONS = 6;

export type RequestType =
  | 'START_RUN'
  | 'TOOL_CALL'
  | 'TOOL_RESULT'
  | 'FINISH'
  | 'CANCEL'
  | 'RESUME'
  | 'MODEL_USAGE'
  | 'CHECKPOINT'
  | 'SETTLE'
  /** What a type from a newer writer reads as; refused. */
  | 'UNKNOWN'
  | 'REISSUE';

/** The Avro record `io.loopguard.service.Request` (schemas/service/request.avsc), field for field. */
export interface WireRequest {
  readonly request_id: string;
  readonly run_id: string;
  readonly type: RequestType;
  readonly sent_at_ms: number;
  readonly task_type: string | null;
  readonly tenant: string | null;
  readonly progress_version: number | null;
  readonly tool: string | null;
  readonly args_json: string | null;
  readonly operation_key: string | null;
  readonly side_effect: boolean | null;
  readonly cost_estimate_usd: number | null;
  readonly after_user_turn: boolean | null;
  readonly call_id: string | null;
  readonly result_kind: string | null;
  readonly result_code: string | null;
  readonly result_json: string | null;
  readonly result_hash: string | null;
  readonly retry_after_ms: number | null;
  readonly tokens: number | null;
  readonly cost_usd: number | null;
  readonly terminal: boolean | null;
  readonly in_doubt: boolean | null;
  readonly verified: boolean | null;
  readonly gaps: string[] | null;
  readonly reason: string | null;
  readonly precondition_change: string | null;
  readonly approved_by: string | null;
  readonly tokens_in: number | null;
  readonly tokens_out: number | null;
  readonly checkpoint_id: string | null;
  readonly happened: boolean | null;
  readonly settled_by: string | null;
  readonly new_operation_key: string | null;
  readonly key_id: string | null;
  readonly signature: string | null;
  readonly can_reconcile: boolean | null;
  readonly reconciled: boolean | null;
}

/** The Avro record `io.loopguard.service.Decision` (schemas/service/decision.avsc). */
export interface WireDecision {
  readonly request_id: string;
  readonly run_id: string;
  readonly decision: string;
  readonly status: string;
  readonly seq: number;
  readonly rule: string | null;
  readonly message: string;
  readonly warning: string | null;
  readonly wait_until_ms: number | null;
  readonly evidence_json: string | null;
  readonly result_json: string | null;
  readonly report_json: string | null;
  readonly error_code: string | null;
  readonly error_field: string | null;
  readonly worker: string;
  readonly decided_at_ms: number;
  readonly checkpoint_id: string | null;
}

/** A request with every optional field null: what a client fills in. */
export function emptyRequest(
  requestId: string,
  runId: string,
  type: RequestType,
  sentAtMs: number,
): WireRequest {
  return {
    request_id: requestId,
    run_id: runId,
    type,
    sent_at_ms: sentAtMs,
    task_type: null,
    tenant: null,
    progress_version: null,
    tool: null,
    args_json: null,
    operation_key: null,
    side_effect: null,
    cost_estimate_usd: null,
    after_user_turn: null,
    call_id: null,
    result_kind: null,
    result_code: null,
    result_json: null,
    result_hash: null,
    retry_after_ms: null,
    tokens: null,
    cost_usd: null,
    terminal: null,
    in_doubt: null,
    verified: null,
    gaps: null,
    reason: null,
    precondition_change: null,
    approved_by: null,
    tokens_in: null,
    tokens_out: null,
    checkpoint_id: null,
    happened: null,
    settled_by: null,
    new_operation_key: null,
    key_id: null,
    signature: null,
    can_reconcile: null,
    reconciled: null,
  };
}
