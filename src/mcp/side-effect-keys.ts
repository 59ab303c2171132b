/**
 * Operation keys for the side-effecting calls of one MCP session. MCP says nothing about which
 * business operation a call is, so the proxy infers it from the order of calls:
 *
 * - the same call (tool and canonical arguments) as the session's last side effect is a retry of
 *   it: the same key, so a payment asked twice runs once and the second answer is the first one;
 * - a call whose earlier twin is still in doubt gets that twin's key: it may have happened, so the
 *   ledger holds it for a person instead of running it again;
 * - any other call is a new operation, also when an identical one ran before with another side
 *   effect in between: write "hello", "world", "hello" to one file runs three times and leaves
 *   "hello", as the user asked (a state-setting write after another write is not a retry).
 *
 * Keys are `mcp:<session>:<tool>:<fingerprint>:<n>`, the session being the first run's id, so a
 * run the session starts after a stop still sees the operations in doubt of the runs before it.
 */
export class SideEffectKeys {
  private count = 0;
  private last: { readonly call: string; readonly key: string } | null = null;
  /** In-doubt keys by call (tool and fingerprint). */
  private readonly doubtful = new Map<string, string>();

  constructor(private readonly session: string) {}

  /** The key of a side-effecting call of `tool` whose canonical arguments have `fingerprint`. */
  keyFor(tool: string, fingerprint: string): string {
    const call = `${tool}:${fingerprint}`;
    if (this.last?.call === call) return this.last.key;
    const key = this.doubtful.get(call) ?? `mcp:${this.session}:${call}:${++this.count}`;
    this.last = { call, key };
    return key;
  }

  /** What the ledger says of `key` after its call: in doubt, or anything else (done, released). */
  settled(tool: string, fingerprint: string, key: string, inDoubt: boolean): void {
    const call = `${tool}:${fingerprint}`;
    if (inDoubt) this.doubtful.set(call, key);
    else if (this.doubtful.get(call) === key) this.doubtful.delete(call);
  }
}
