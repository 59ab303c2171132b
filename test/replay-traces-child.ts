/**
 * Child process of test/replay-determinism.unit.test.ts: re-decides every recorded run in a fresh
 * process, in reverse order, with the built-in similarity that remembers nothing, and prints
 * run id -> digest of the events as JSON.
 */
import { diceSimilarity } from '../src/domain/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { recordedTraces, redecide } from './support/recorded-traces.js';

const runs = recordedTraces().reverse();
const digests = redecide(runs, { hashing: nodeHashing('replay-determinism'), similarity: diceSimilarity });
process.stdout.write(JSON.stringify(digests));
