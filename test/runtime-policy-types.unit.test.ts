import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, type PolicyInput } from '../src/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'loopguard-policy-'));
  dirs.push(d);
  return d;
};

describe('the typed policy of createGuard', () => {
  it('takes a policy object literal with every field optional, nested ones partly', async () => {
    const policy: PolicyInput = {
      maxSteps: 20,
      nearDuplicate: { threshold: 0.9 },
      rules: { exact_repeat: 'warn_first' },
      tools: { charge_card: { sideEffect: true } },
      taskTypes: { research: { maxSteps: 30 } },
    };
    const guard = await createGuard({ dataDir: dataDir(), policy });
    expect(guard.policy).toMatchObject({ maxSteps: 20, nearDuplicate: { threshold: 0.9, limit: 2 } });
    expect(guard.policy.tools.charge_card).toMatchObject({ sideEffect: true });
    await guard.close();
  });

  it('refuses a misspelt field at compile time, and the same object at run time', async () => {
    // Each @ts-expect-error fails the type check (npm run lint) if the typo compiled.
    // @ts-expect-error: maxStep is not a policy field
    const top = createGuard({ dataDir: dataDir(), policy: { maxStep: 20 } });
    // @ts-expect-error: sideEfect is not a tool field
    const tool = createGuard({ dataDir: dataDir(), policy: { tools: { charge_card: { sideEfect: true } } } });
    // @ts-expect-error: explode is not a rule action
    const rule = createGuard({ dataDir: dataDir(), policy: { rules: { exact_repeat: 'explode' } } });
    for (const p of [top, tool, rule]) await expect(p).rejects.toMatchObject({ code: 'invalid_policy' });
  });
});
