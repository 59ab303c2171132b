/**
 * Run snapshots, in one place: what a stored snapshot is (the run machine's persisted snapshot,
 * one codec, older formats upcast) and the two named strategies that store them: per run (a
 * run's writer, `loopguard.snapshots`: the library's resume and any run's own load) and per
 * partition (a `serve` worker, `loopguard.worker-snapshots`: a takeover). A snapshot is a cache:
 * the runs topic stays the truth, and one that cannot be read only means reading more of it.
 */
export * from './machine-snapshot.js';
export * from './per-partition.js';
export * from './per-run.js';
export * from './snapshot-pointer.js';
