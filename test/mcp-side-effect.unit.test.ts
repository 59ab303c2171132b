import { describe, expect, it } from 'vitest';
import { declaredSideEffects, isSideEffectTool } from '../src/mcp/index.js';

describe('isSideEffectTool', () => {
  it('given no policy word, goes by the annotations, reading silence as "may write"', () => {
    expect(isSideEffectTool({ annotations: { readOnlyHint: true } })).toBe(false);
    expect(isSideEffectTool({ annotations: { destructiveHint: true } })).toBe(true);
    expect(isSideEffectTool({ annotations: { readOnlyHint: false } })).toBe(true);
    expect(isSideEffectTool({ annotations: { title: 'no hints' } })).toBe(true);
    expect(isSideEffectTool({})).toBe(true);
    expect(isSideEffectTool(undefined)).toBe(true);
    // Contradictory hints: the destructive one wins, a double charge being the costlier mistake.
    expect(isSideEffectTool({ annotations: { readOnlyHint: true, destructiveHint: true } })).toBe(true);
  });

  it('given the policy names the side effect, the policy wins over the annotations', () => {
    expect(isSideEffectTool({ annotations: { readOnlyHint: true } }, true)).toBe(true);
    expect(isSideEffectTool({ annotations: { destructiveHint: true } }, false)).toBe(false);
  });
});

describe('declaredSideEffects', () => {
  it('keeps only the tools whose sideEffect the policy JSON states', () => {
    expect(
      declaredSideEffects({
        tools: { pay: { sideEffect: true }, search: { maxCalls: 3 }, log: { sideEffect: false } },
      }),
    ).toEqual({ pay: true, log: false });
    expect(declaredSideEffects({})).toEqual({});
    expect(declaredSideEffects(null)).toEqual({});
  });

  it('keeps the word on a tool named "__proto__": declared a side effect, it stays one whatever its annotations say', () => {
    // JSON.parse makes "__proto__" an own key, as a policy file read from disk has it.
    const declared = declaredSideEffects(JSON.parse('{"tools":{"__proto__":{"sideEffect":true}}}'));
    expect(Object.getOwnPropertyDescriptor(declared, '__proto__')?.value).toBe(true);
  });
});
