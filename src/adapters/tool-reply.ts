import { type CallResult, guardNote, toModelMessage } from '../runtime/index.js';

/**
 * What a framework hands the model for a guarded call: the tool's own value when the guard has
 * nothing to add (so typed tool outputs stay as they are), else the guard's message, which
 * carries the value where there is one.
 */
export function toolReply(r: CallResult): unknown {
  return r.status === 'executed' && guardNote(r) === null ? r.value : toModelMessage(r);
}
