/**
 * One `execute_tool {tool}` span per guarded call, following the OpenTelemetry GenAI conventions,
 * recorded by the SDK's in-memory exporter once the application registers a tracer provider, and
 * nothing at all before it does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { redactText } from '../src/domain/index.js';
import { otelTracing } from '../src/otel.js';
import { createGuard, type Guard, ToolError } from '../src/runtime/index.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function guardIn(traced = true): Promise<Guard> {
  const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-traces-'));
  const guard = await createGuard({
    dataDir,
    policy: { tools: { pay: { sideEffect: true } } },
    ...(traced ? { tracing: otelTracing() } : {}),
  });
  cleanups.push(async () => {
    await guard.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return guard;
}

/** The application's side: an SDK with an in-memory exporter, registered globally. */
function registerSdk(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contexts = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contexts);
  trace.setGlobalTracerProvider(provider);
  cleanups.push(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  return exporter;
}

describe('execute_tool spans', () => {
  it('follow the GenAI conventions, carry the decision and rule, and parent the spans the tool opens', async () => {
    const guard = await guardIn();
    const early = await guard.startRun({ runId: 'before-sdk' });
    await early.call({ tool: 'search', args: { q: 'x' } }, async () => 'r');
    const exporter = registerSdk();
    // Made before the SDK was registered: it was a no-op and stays unrecorded.
    expect(exporter.getFinishedSpans()).toEqual([]);

    const run = await guard.startRun({ runId: 'run-7' });
    const inner = trace.getTracer('the-tool');
    for (let i = 0; i < 3; i++)
      await run.call({ tool: 'search', args: { q: 'refund policy' } }, async () => {
        inner.startSpan('http GET /search').end();
        return 'nothing found';
      });
    const pay = await guard.startRun({ runId: 'run-8' });
    await pay.call({ tool: 'pay', args: { order: 'A1' }, operationKey: 'acme:pay:A1' }, async () => {
      throw Object.assign(new Error('card declined'), { code: 'card_declined' });
    });

    const spans = exporter.getFinishedSpans();
    const tools = spans.filter((s) => s.name.startsWith('execute_tool'));
    expect(tools.map((s) => s.name)).toEqual([
      'execute_tool search',
      'execute_tool search',
      'execute_tool search',
      'execute_tool pay',
    ]);
    for (const s of tools) {
      expect(s.kind).toBe(SpanKind.INTERNAL);
      expect(s.attributes['gen_ai.operation.name']).toBe('execute_tool');
      expect(s.attributes['gen_ai.tool.call.id']).toMatch(/^call-/);
    }
    const [first, , stopped, failed] = tools;
    expect(first?.attributes).toMatchObject({
      'gen_ai.tool.name': 'search',
      'loopguard.run_id': 'run-7',
      'loopguard.decision': 'execute',
    });
    expect(first?.attributes['error.type']).toBeUndefined();
    expect(stopped?.attributes).toMatchObject({
      'loopguard.decision': 'stop_partial',
      'loopguard.rule': 'exact_repeat',
    });
    expect(failed?.attributes).toMatchObject({
      'gen_ai.tool.name': 'pay',
      'loopguard.run_id': 'run-8',
      'loopguard.decision': 'execute',
    });
    expect(failed?.attributes['error.type']).toEqual(expect.any(String));
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);

    // The tool's own spans are children of the call's span: two ran, the third was stopped.
    const children = spans.filter((s) => s.name === 'http GET /search');
    expect(children).toHaveLength(2);
    expect(children.map((c) => c.parentSpanContext?.spanId)).toEqual(
      tools.slice(0, 2).map((t) => t.spanContext().spanId),
    );
  });

  it("set error.type to the tool's code redacted as the run records it", async () => {
    const guard = await guardIn();
    const exporter = registerSdk();
    const secret = 'sk-live-4eC39HqLyjWDarjtT1zdp7dc';
    const run = await guard.startRun({ runId: 'run-9' });
    await run.call({ tool: 'get', args: { q: 1 } }, () => {
      throw new ToolError('FATAL', `denied_for_${secret}`);
    });
    const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'execute_tool get');
    expect(span?.attributes['error.type']).toBe(redactText(`denied_for_${secret}`, guard.hashing));
    expect(String(span?.attributes['error.type'])).not.toContain(secret);
  });

  it('come only from a guard given otelTracing(): the root library opens none by itself', async () => {
    const guard = await guardIn(false);
    const exporter = registerSdk();
    const run = await guard.startRun({ runId: 'untraced' });
    const inner = trace.getTracer('the-tool');
    await run.call({ tool: 'search', args: { q: 'x' } }, async () =>
      inner.startActiveSpan('fetch', (s) => s.end()),
    );
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['fetch']);
    expect(exporter.getFinishedSpans()[0]?.parentSpanContext).toBeUndefined();
  });
});
