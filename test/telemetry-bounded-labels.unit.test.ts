/**
 * Metric labels stay a bounded set whatever agents name: 10,000 tool names give at most the cap
 * of tool series plus `other`; a rule outside the guard's fixed set (a tool's own error code
 * ending a run) is `other`.
 */
import { describe, expect, it } from 'vitest';
import { ruleLabel, TOOL_LABEL_CAP } from '../src/telemetry/bounded-labels.js';
import { LoopguardMetrics } from '../src/telemetry/index.js';

const series = (text: string, metric: string) =>
  text.split('\n').filter((l) => l.startsWith(`${metric}{`) || l.startsWith(`${metric} `));

describe('bounded metric labels', () => {
  it('10,000 tool names: the first ones by name, the rest folded into other', async () => {
    const m = new LoopguardMetrics();
    for (let i = 0; i < 10_000; i++) m.toolSeconds(`tool-${i}`, 0.01);
    m.toolSeconds('tool-0', 0.01);
    const text = await m.text();
    const counts = series(text, 'loopguard_tool_seconds_count');
    expect(counts).toHaveLength(TOOL_LABEL_CAP + 1);
    expect(counts).toContain('loopguard_tool_seconds_count{tool="tool-0"} 2');
    expect(counts).toContain(`loopguard_tool_seconds_count{tool="other"} ${10_000 - TOOL_LABEL_CAP}`);
    expect(text).not.toContain('tool-9999');
    expect(text.length).toBeLessThan(200_000);
  });

  it('rules and terminal states outside the fixed sets are other', async () => {
    const m = new LoopguardMetrics();
    m.stopped('STOPPED_LOOP_GUARD', 'exact_repeat');
    m.stopped('FAILED', 'card_declined_4711');
    m.stopped('EVIL\u001b[2J', 'x');
    const text = await m.text();
    expect(series(text, 'loopguard_stops_total').sort()).toEqual([
      'loopguard_stops_total{terminal_state="FAILED",rule="other"} 1',
      'loopguard_stops_total{terminal_state="STOPPED_LOOP_GUARD",rule="exact_repeat"} 1',
      'loopguard_stops_total{terminal_state="other",rule="other"} 1',
    ]);
    expect([ruleLabel(null), ruleLabel(''), ruleLabel('step_budget'), ruleLabel('__proto__')]).toEqual([
      'none',
      'none',
      'step_budget',
      'other',
    ]);
  });
});
