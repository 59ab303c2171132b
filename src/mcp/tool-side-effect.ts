import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { put } from '../domain/index.js';

/**
 * Whether calling an MCP tool may change the world, so its calls go through the idempotency
 * ledger. The policy decides when it names the tool's `sideEffect`; otherwise the tool's own
 * annotations do: `destructiveHint: true` is a side effect, and so is any tool that does not say
 * `readOnlyHint: true`. Annotations are hints from the server, so the safe reading of silence is
 * "may write": a needless ledger entry costs little, a payment made twice costs a customer.
 */
export function isSideEffectTool(tool: Pick<Tool, 'annotations'> | undefined, declared?: boolean): boolean {
  if (declared !== undefined) return declared;
  const hints = tool?.annotations;
  return hints?.destructiveHint === true || hints?.readOnlyHint !== true;
}

/**
 * The tools a policy file marks with `sideEffect` explicitly. The parsed Policy fills in `false`
 * for tools that only set other fields, so only the raw JSON tells "said so" from "defaulted".
 */
export function declaredSideEffects(policyJson: unknown): Readonly<Record<string, boolean>> {
  const tools = (policyJson as { tools?: unknown } | null)?.tools;
  if (typeof tools !== 'object' || tools === null) return {};
  const out: Record<string, boolean> = {};
  for (const [name, t] of Object.entries(tools)) {
    const flag = (t as { sideEffect?: unknown } | null)?.sideEffect;
    // put: a tool named "__proto__" is a tool like any other (`out[name] =` would drop its word).
    if (typeof flag === 'boolean') put(out, name, flag);
  }
  return out;
}
