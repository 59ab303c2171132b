/**
 * loopguard: a runtime guard for AI-agent tool calls. The package's root entry, its public API.
 * Kafka is `loopguard/kafka`, the MCP proxy `loopguard/mcp`, Prometheus metrics
 * `loopguard/metrics`, OpenTelemetry spans `loopguard/otel`: each loads its optional package, this
 * entry none of them (every import below names its file, so no barrel pulls an adapter in).
 * What no entry exports is internal and may change without a major version.
 */
export {
  type ChildState,
  ConflictError,
  DEFAULT_POLICY,
  type Decision,
  type DomainEvent,
  ERROR_CODES,
  type ErrorCode,
  type EventOf,
  type EventType,
  type Evidence,
  IllegalStateError,
  InvalidInputError,
  isTerminal,
  type Limits,
  type LiveState,
  LOOP_RULES,
  LoopguardError,
  type LoopRule,
  type NearDuplicatePolicy,
  type Policy,
  type PolicyInput,
  parsePolicy,
  type RecordedEvent,
  type Result,
  type ResultKind,
  type RuleAction,
  type RunPolicy,
  type RunState,
  type RunStatus,
  resolvePolicy,
  type Similarity,
  type Spend,
  type StopReport,
  TERMINAL_STATES,
  type TerminalState,
  type ToolPolicy,
  UnavailableError,
} from './domain/index.js';
export { MemorySchemaStore } from './events/memory-schema-store.js';
export { DEFAULT_DATA_DIR, EmbeddedLog, type EmbeddedLogOptions } from './log/embedded/embedded-log.js';
export { SqliteSchemaStore } from './log/embedded/sqlite-schema-store.js';
export type { EventLog, LogRecord, StoredRecord, TopicName } from './log/event-log.js';
export { MemoryLedger } from './log/memory-ledger.js';
export { MemoryLog } from './log/memory-log.js';
export type { RunLog } from './log/run-log.js';
export {
  type Clock,
  ManualClock,
  type RunInspector,
  type RunMachineEvent,
  type RunSnapshot,
  runMachine,
  systemClock,
} from './machines/index.js';
export type {
  AppendToStreamOptions,
  AppendToStreamResult,
  LoadedRun,
  RunStream,
  SchemaStore,
} from './ports/index.js';
export type { ToolFn } from './runtime/execute-tool.js';
export {
  type CallHooks,
  type CallRequest,
  type CallResult,
  type ClaimOutcome,
  type ClaimOwner,
  type CreateGuard,
  createGuard,
  Guard,
  type GuardedResult,
  GuardedRun,
  type GuardedTool,
  type GuardPorts,
  type GuardToolsOptions,
  guardTools,
  type Ledger,
  type LedgerState,
  outcome,
  type ReissueNote,
  type Run,
  type RunView,
  SqliteLedger,
  type StartRun,
  ToolError,
  type ToolImpl,
  type ToolOutcome,
  toModelMessage,
} from './runtime/index.js';
export type { CallSpan, CallTracing, GuardMetrics } from './telemetry/guard-telemetry-ports.js';
