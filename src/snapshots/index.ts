/**
 * Run snapshots: what a stored one is, and the two strategies that store them, per run (a run's
 * writer, for a resume) and per partition (a `serve` worker, for a takeover). A snapshot is a
 * cache: the runs topic stays the truth, and one that cannot be read only means reading more of it.
 */
export * from './machine-snapshot.js';
export * from './per-partition.js';
export * from './per-run.js';
export * from './snapshot-pointer.js';
