import { failedResult, type Hashing, type RunState, resultHash, sameOwner } from '../domain/index.js';
import type { CommandInput } from '../machines/index.js';
import type { Ledger } from '../ports/ledger.js';
import { ledgerCall } from './claim-operation.js';

/**
 * A run rebuilt from the log may end on a call that has a decision but no result: the process
 * died while the tool ran. Its result is recorded now, from the ledger when the ledger learned it
 * (the tool's success reached the ledger before the crash), else as interrupted, and in doubt if
 * it was a side effect: nobody knows whether it happened, so it is never simply run again.
 */
export async function interruptedCompletion(
  state: RunState,
  ledger: Ledger,
  hashing: Hashing,
): Promise<Extract<CommandInput, { type: 'CompleteToolCall' }> | null> {
  const call = state.inFlight;
  if (call === null) return null;
  const key = call.sideEffect ? call.operationKey : null;
  const owner = { runId: state.runId, callId: call.callId };
  if (key !== null) {
    const known = await ledgerCall(`get ${key}`, () => ledger.get(key));
    const ours = known !== undefined && sameOwner(known.owner, owner);
    if (known?.status === 'completed' && ours) {
      return {
        type: 'CompleteToolCall',
        callId: call.callId,
        kind: 'SUCCESS',
        resultJson: known.resultJson,
        resultHash: resultHash('SUCCESS', null, known.resultJson, hashing),
      };
    }
    if (known?.status === 'claimed' && ours)
      await ledgerCall(`mark ${key} in doubt`, () =>
        ledger.markInDoubt(key, owner, 'the process ended while the tool ran'),
      );
  }
  return {
    type: 'CompleteToolCall',
    callId: call.callId,
    kind: 'RETRYABLE',
    code: 'interrupted',
    ...failedResult('RETRYABLE', 'interrupted', hashing),
    inDoubt: key !== null,
  };
}
