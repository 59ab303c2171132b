/** `loopguard mcp --metrics-port`: the proxied session's guard metrics, scraped while it runs. */
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpSession } from './support/mcp-session.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('loopguard mcp --metrics-port', () => {
  it('serves the decisions and tool times of the proxied calls, without the run id', async () => {
    const s = await mcpSession({ flags: ['--metrics-port', '0', '--run-id', 'mcp-secret-run'] });
    cleanups.push(() => rmSync(s.dir, { recursive: true, force: true }));
    cleanups.push(() => s.client.close());
    await s.call('pay', { order: 'A1', amount: 30 });
    await s.call('search', { q: 'refund' });
    const end = Date.now() + 10_000;
    let url: string | undefined;
    while (url === undefined && Date.now() < end) {
      url = /metrics on (http:\S+)/.exec(s.stderr())?.[1];
      if (url === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(url).toBeDefined();
    const text = await (await fetch(url as string)).text();
    expect(text).toContain('loopguard_decisions_total{decision="execute",rule="none"} 2\n');
    expect(text).toContain('loopguard_tool_seconds_count{tool="pay"} 1\n');
    expect(text).toContain('loopguard_tool_seconds_count{tool="search"} 1\n');
    expect(text).toContain('loopguard_guard_seconds_count 2\n');
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).not.toContain('mcp-secret-run');
  }, 60_000);
});
