// With OpenTelemetry in the host (an SDK's context manager and W3C propagator registered), a
// handler runs in the server span's context: the spans it starts — from a plain function and
// from an async one, across an await — nest under the server span, with no propagation code
// in the handler. Its own file: the OpenTelemetry globals are per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client, Server } from '../lib/index.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const TP = `00-${TRACE}-00f067aa0ba902b7-01`;

test('a handler\'s own OpenTelemetry spans nest under the server span (sync and async, both eras)', async (t) => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  t.after(() => {
    trace.disable();
    context.disable();
    propagation.disable();
  });
  const tracer = trace.getTracer('handler');
  const s = new Server({ name: 'otel', version: '1' });
  s.tool({ name: 'work', inputSchema: { type: 'object' } }, (_args, ctx) => {
    tracer.startActiveSpan('work', (span) => span.end());
    return ctx.traceContext.traceparent;
  });
  s.tool({ name: 'work_async', inputSchema: { type: 'object' } }, async (_args, ctx) => {
    await new Promise((r) => setTimeout(r, 5));
    await tracer.startActiveSpan('work-async', async (span) => {
      await new Promise((r) => setTimeout(r, 5));
      span.end();
    });
    return ctx.traceContext.traceparent;
  });
  for (const mode of ['modern', 'legacy']) {
    exporter.reset();
    const c = await Client.connectInMemory(s, { mode });
    try {
      for (const [tool, name] of [['work', 'work'], ['work_async', 'work-async']]) {
        const r = await c.request('tools/call', { name: tool, arguments: {}, _meta: { traceparent: TP } });
        const serverSpan = r.content[0].text.split('-')[2];
        const [span] = exporter.getFinishedSpans().filter((x) => x.name === name);
        assert.ok(span, `${name} (${mode})`);
        assert.equal(span.spanContext().traceId, TRACE, `${name} (${mode}): the caller's trace`);
        const parent = span.parentSpanContext?.spanId ?? span.parentSpanId;
        assert.equal(parent, serverSpan, `${name} (${mode}): a child of the server span`);
      }
    } finally {
      await c.close();
    }
  }
});
