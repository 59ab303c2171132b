/**
 * loopguard: a runtime guard for AI-agent tool calls. The package's root entry, its public API:
 * the guard and its calls, result classes, the policy, run states and stop reports, the ports
 * (EventLog, Ledger, SchemaStore, RunStore) with their embedded and in-memory adapters. Kafka is
 * `loopguard/kafka`, the MCP proxy `loopguard/mcp`. Everything else (deciders, folds, codecs,
 * detectors) is internal and may change without a major version.
 */
export {
  type ChildState,
  DEFAULT_POLICY,
  type Decision,
  type DomainEvent,
  diceSimilarity,
  type EventOf,
  type EventType,
  type Evidence,
  isTerminal,
  type Limits,
  type LiveState,
  LOOP_RULES,
  LoopguardError,
  type LoopRule,
  type NearDuplicatePolicy,
  type Policy,
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
} from './domain/index.js';
export { FileSchemaStore, MemorySchemaStore, type SchemaStore } from './events/index.js';
export {
  DEFAULT_DATA_DIR,
  EmbeddedLog,
  type EmbeddedLogOptions,
  type EventLog,
  EventStore,
  type LogRecord,
  MemoryLog,
  type StoredEvent,
  type StoredRecord,
  TOPICS,
  type TopicName,
} from './log/index.js';
export { type Clock, ManualClock, systemClock } from './machines/index.js';
export type { ToolFn } from './runtime/execute-tool.js';
export {
  type CallHooks,
  type CallRequest,
  type CallResult,
  type ClaimOutcome,
  type ClaimOwner,
  type CreateGuard,
  createGuard,
  FileLedger,
  Guard,
  GuardedRun,
  type GuardPorts,
  type GuardToolsOptions,
  guardTools,
  type Ledger,
  type LedgerState,
  outcome,
  type ReissueNote,
  type RunStore,
  runStoreOf,
  type StartRun,
  ToolError,
  type ToolImpl,
  type ToolOutcome,
  toModelMessage,
} from './runtime/index.js';
export { LoopguardMetrics } from './telemetry/index.js';
