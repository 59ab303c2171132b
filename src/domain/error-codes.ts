/**
 * Every code a LoopguardError can carry, with its family (errors.ts has a class for each), whether
 * the same input may succeed later (`retriable`, the default a throw site gets) and what it means.
 * The single source: `ErrorCode` is its keys, and tests hold the README and the codes src raises to it.
 */
export type ErrorFamily = 'conflict' | 'invalid_input' | 'illegal_state' | 'unavailable' | 'other';

interface CodeSpec {
  readonly family: ErrorFamily;
  readonly retriable: boolean;
  readonly meaning: string;
}

/** A code's entry; only `unavailable` codes are retriable unless the entry says otherwise. */
const c = <F extends ErrorFamily>(family: F, meaning: string, retriable = family === 'unavailable') => ({
  family,
  retriable,
  meaning,
});

export const ERROR_CODES = {
  // conflict
  conflict: c('conflict', 'an append expected another stream version: another writer appended first'),
  run_exists: c('conflict', 'a run with this id was already started'),
  duplicate_run: c('conflict', 'two traces record the same run id'),
  duplicate_request_id: c('conflict', 'a service request reused the id of an earlier, different request'),
  not_claim_owner: c('conflict', 'the operation claim belongs to another owner'),
  ledger_contended: c('conflict', 'the ledger entry kept changing hands while being claimed', true),
  // invalid input (the error names the field)
  invalid_input: c('invalid_input', 'an argument of a guard or run method is not valid'),
  invalid_call: c('invalid_input', 'a tool call request (tool, args, side effect) is not valid'),
  invalid_args: c('invalid_input', "a call's args are not JSON"),
  invalid_result: c('invalid_input', "a tool's result is not JSON"),
  invalid_usage: c('invalid_input', 'a model usage record (tokens, cost) is not valid'),
  too_deep: c('invalid_input', 'a JSON value is nested deeper than the limit'),
  bad_request: c('invalid_input', 'a service request does not fit the wire schema'),
  unauthenticated: c(
    'invalid_input',
    'a service request is not signed by a known key, or its signature expired or was already used',
  ),
  forbidden: c('invalid_input', "a service request's key may not act on that run or tenant"),
  // illegal state
  illegal_transition: c('illegal_state', "the run's state machine refuses the move"),
  run_not_started: c('illegal_state', 'the run has not been started'),
  call_in_flight: c('illegal_state', 'the run has a call without a result yet'),
  reentrant_call: c('illegal_state', 'a call was made from inside another call of the same run'),
  run_ended: c('illegal_state', 'the run has already ended'),
  unknown_call: c('illegal_state', 'no call with that id is waiting for a result'),
  precondition_unchanged: c(
    'illegal_state',
    'a resume records no precondition change; resuming unchanged would loop again',
  ),
  budget_still_spent: c('illegal_state', 'a resume under a policy whose spent budget is still spent'),
  run_stopped: c('illegal_state', 'the run was stopped by the guard; no further calls'),
  call_not_done: c(
    'illegal_state',
    'a guarded call did not do its work (refused, stopped, waiting, in doubt or failed)',
  ),
  parent_ended: c(
    'illegal_state',
    'a sub-agent was started under a parent, or resumed under an ancestor, that has ended',
  ),
  read_only: c('illegal_state', 'the store is open for reading only'),
  log_closed: c('illegal_state', 'the event log is closed'),
  ledger_closed: c('illegal_state', 'the ledger is not open'),
  reissue_refused: c('illegal_state', 'the operation may not be reissued in its current state'),
  settle_refused: c(
    'illegal_state',
    'the operation is still in flight; only an in-doubt operation is settled',
  ),
  needs_migration: c('illegal_state', 'the store was written by an older loopguard; run loopguard migrate'),
  store_too_new: c('illegal_state', 'the store was written by a newer loopguard'),
  migrate_refused: c('illegal_state', 'migrate cannot run on this store'),
  state_dropped: c('illegal_state', 'a run list fold was given an event of a run whose state it dropped'),
  // unavailable
  log_unavailable: c('unavailable', 'the event log did not accept or return records'),
  kafka_unavailable: c('unavailable', 'Kafka failed a request (retriable as kafkajs marks it)'),
  kafka_timeout: c('unavailable', 'Kafka did not answer in time'),
  store_busy: c('unavailable', 'the embedded store is locked by another writer'),
  disk_full: c('unavailable', 'the embedded store could not grow: the disk is full'),
  log_io: c(
    'unavailable',
    'the embedded store failed to read or write (retriable on a transient I/O error)',
    false,
  ),
  registry_unavailable: c('unavailable', 'the schema registry failed or did not answer (retriable on 5xx)'),
  schema_store_unavailable: c('unavailable', 'the schema store failed while fetching a schema'),
  guard_unavailable: c('unavailable', 'the remote guard service did not answer'),
  decision_timeout: c('unavailable', 'the service did not answer a request in time'),
  upstream_unavailable: c('unavailable', 'the upstream MCP server is not running'),
  timeout: c('unavailable', 'a wait ran out of time'),
  webhook_unreachable: c('unavailable', 'the alert webhook could not be reached'),
  webhook_refused: c('unavailable', 'the alert webhook answered with an error status'),
  webhook_redirected: c('unavailable', 'the alert webhook answered with a redirect'),
  alert_delivery_failed: c('unavailable', 'an alert could not be delivered'),
  alert_aborted: c('unavailable', 'alert delivery was abandoned while shutting down'),
  // other
  usage: c('other', 'the command line is not valid'),
  internal: c('other', 'a bug in loopguard: an invariant did not hold'),
  error: c('other', 'the service answered an error without a code'),
  invalid_policy: c('other', 'the policy is not valid'),
  policy_unreadable: c('other', 'the policy file could not be read'),
  invalid_trace: c('other', 'a trace file line is not a valid trace record'),
  input_unreadable: c('other', 'an input file could not be read'),
  output_unwritable: c('other', 'an output file could not be written'),
  too_large: c('other', 'a value or input is larger than the limit'),
  record_too_large: c('other', 'a record is larger than the store accepts'),
  unknown_run: c('other', 'the run is not in the log'),
  unknown_parent: c('other', 'the parent run is not in the log'),
  secret_key_required: c('other', 'a secret key is needed and none was given'),
  secret_key_unreadable: c('other', 'the secret key file could not be read or is malformed'),
  bad_tenant_keys: c('other', 'the tenant keys file is not valid'),
  bad_webhook: c('other', 'the alert webhook is not a valid URL'),
  webhook_credentials: c('other', 'the alert webhook URL carries credentials'),
  alert_undeliverable: c('other', 'an alert could not be delivered after every retry'),
  kafka_config: c('other', 'the Kafka options are incomplete'),
  missing_dependency: c(
    'other',
    'an optional package this entry or command needs is not installed (the message names it)',
  ),
  kafka_protocol: c('other', 'Kafka answered in a way the protocol does not allow'),
  partitioned_topic: c('other', 'the topic has more partitions than the reader supports'),
  registry_config: c('other', 'the schema registry did not keep the compatibility level set'),
  read_handler_failed: c('other', "a reader's handler threw"),
  no_data_dir: c('other', 'the data directory holds no store, or cannot be made'),
  log_corrupt: c('other', 'the embedded store is corrupt; run loopguard repair'),
  bad_topic: c('other', 'a topic name is not valid'),
  bad_offset: c('other', 'an offset, count or sequence number is out of range'),
  bad_key: c('other', 'a record key does not match the stream it is appended to'),
  bad_append: c('other', 'an append to a run stream is malformed'),
  bad_run_id: c('other', 'a run id is empty'),
  bad_event: c('other', 'an event cannot be encoded'),
  bad_payload: c('other', 'an encoded payload cannot be decoded'),
  bad_snapshot: c('other', 'a stored snapshot cannot be decoded'),
  bad_schema: c('other', 'a schema is not valid'),
  bad_schema_id: c('other', 'a schema id does not fit the wire header'),
  bad_magic: c('other', 'a payload does not start with the wire magic byte'),
  truncated: c('other', 'a payload is shorter than its header or schema says'),
  unknown_schema: c('other', 'no schema with that id is known'),
  incompatible_schema: c('other', 'the registry refused a schema as incompatible'),
  schemas_missing: c('other', 'the bundled Avro schemas were not found'),
  schemas_invalid: c('other', 'the bundled Avro schemas do not assemble'),
} as const satisfies Record<string, CodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes of one family, so that a subclass cannot be built with another family's code. */
export type CodeOf<F extends ErrorFamily> = {
  [K in ErrorCode]: (typeof ERROR_CODES)[K]['family'] extends F ? K : never;
}[ErrorCode];

export const isErrorCode = (s: string): s is ErrorCode => Object.hasOwn(ERROR_CODES, s);
