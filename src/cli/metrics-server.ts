import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import { LoopguardMetrics } from '../telemetry/index.js';

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Metrics for a long-running command (alert, ui): loopguard's, plus the process's own (CPU, memory, event loop). */
export function serviceMetrics(): LoopguardMetrics {
  const metrics = new LoopguardMetrics();
  collectDefaultMetrics({ register: metrics.registry });
  return metrics;
}

/** Serves `GET /metrics` (the Prometheus text format) on `host:port`; port 0 takes any free port. */
export function startMetricsServer(
  metrics: LoopguardMetrics,
  port: number,
  host = '127.0.0.1',
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || new URL(req.url ?? '/', 'http://m').pathname !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found: GET /metrics\n');
      return;
    }
    metrics.text().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text);
      },
      (e: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`metrics: ${e instanceof Error ? e.message : String(e)}\n`);
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${a.port}/metrics`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
