/** What the Kafka kill-at-every-step test and its child process agree on. */
export const KILL_RUNS = ['victim-0', 'victim-1', 'victim-2', 'victim-3'];
/** Short, so the next projector takes a SIGKILLed one's partitions over within seconds. */
export const KILL_SESSION_MS = 6_000;
