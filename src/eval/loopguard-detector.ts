import type { DeciderDeps, Policy } from '../domain/index.js';
import { replayRun } from '../trace/replay.js';
import { type Detector, NO_STOP } from './detector.js';

/** loopguard itself, judged like the baselines: the recorded run replayed through the guard. */
export function loopguardDetector(policy: Policy, deps: DeciderDeps): Detector {
  return {
    name: 'loopguard',
    judge(run) {
      const { stopIndex, summary } = replayRun(run, policy, deps);
      return stopIndex === null ? NO_STOP : { stopIndex, rule: summary.rule };
    },
  };
}
