/**
 * Free TCP ports on 127.0.0.1, picked at runtime so a developer's own Kafka on 9092 (or a
 * second test run) never clashes with ours.
 */
import { createServer, type Server } from 'node:net';

function listenOnZero(): Promise<Server> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolvePromise(server));
  });
}

/**
 * Returns `count` distinct free ports. All sockets are held open until every port is known,
 * so the OS cannot hand the same port out twice; they are closed before returning, leaving a
 * small window in which another process could take one (acceptable for tests).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOnZero());
    return servers.map((s) => {
      const address = s.address();
      if (address === null || typeof address === 'string') throw new Error('unexpected address');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
}
