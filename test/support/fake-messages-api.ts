import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A content block of an assistant turn the fake model answers with. */
export type FakeBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: object };

/** One request the Claude Code binary sent to the Messages API, as it sent it. */
export interface MessagesRequest {
  readonly model: string;
  readonly messages: readonly { readonly role: string; readonly content: unknown }[];
  readonly tools?: readonly { readonly name: string }[];
  readonly stream?: boolean;
}

export interface FakeMessagesApi {
  /** `http://127.0.0.1:<port>`, for `ANTHROPIC_BASE_URL`. */
  readonly url: string;
  /** The agent loop's requests (those that offer tools), in order. */
  readonly turns: readonly MessagesRequest[];
  readonly close: () => Promise<void>;
}

const body = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      s += c;
    });
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });

/** The Messages API's server-sent events for one assistant message. */
function sse(id: string, model: string, blocks: readonly FakeBlock[]): string {
  const events: [string, object][] = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        },
      },
    ],
  ];
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      events.push([
        'content_block_start',
        { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      ]);
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } },
      ]);
    } else {
      events.push([
        'content_block_start',
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        },
      ]);
      events.push([
        'content_block_delta',
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
        },
      ]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  events.push([
    'message_delta',
    { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('');
}

/**
 * A local stand-in for the Anthropic Messages API on 127.0.0.1, for the real Claude Code binary:
 * each request of the agent loop (one that offers tools) gets the next turn of the script, given
 * the requests so far; any other request the binary makes on the side (a title, a summary) gets a
 * short text. Nothing leaves the machine and no key is checked.
 */
export async function startFakeMessagesApi(
  script: (turn: number, request: MessagesRequest) => readonly FakeBlock[],
): Promise<FakeMessagesApi> {
  const turns: MessagesRequest[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/messages') {
        // count_tokens and the like: an answer the client accepts, no model turn spent.
        res.writeHead(path === '/v1/messages/count_tokens' ? 200 : 404, {
          'content-type': 'application/json',
        });
        res.end(
          JSON.stringify(
            path === '/v1/messages/count_tokens'
              ? { input_tokens: 10 }
              : { type: 'error', error: { type: 'not_found_error', message: path } },
          ),
        );
        return;
      }
      const request = JSON.parse(text) as MessagesRequest;
      const agentLoop = (request.tools?.length ?? 0) > 0;
      let blocks: readonly FakeBlock[] = [{ type: 'text', text: 'ok' }];
      if (agentLoop) {
        turns.push(request);
        blocks = script(turns.length - 1, request);
      }
      const id = `msg_${++n}`;
      if (request.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(sse(id, request.model, blocks));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model: request.model,
          content: blocks,
          stop_reason: blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5 },
        }),
      );
    })().catch((e: unknown) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    turns,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
