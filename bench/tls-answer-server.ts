/**
 * A TLS server that answers every POST with one fixed chat completion, speaking HTTP/2 or HTTP/1.1 as the client's
 * ALPN asks: the upstream side of the HTTP/2 comparison (bench/upstream-protocols.ts). Prints `LISTENING <url>`.
 * Usage: node tls-answer-server.js --key <pem> --cert <pem> [--exit-on-stdin-close]
 */
import { readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';

const ANSWER = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'A short answer of a realistic length, the same every time.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 14, total_tokens: 26 },
});

function argument(name: string): string {
  const index = process.argv.indexOf(name);
  const value = index === -1 ? undefined : process.argv[index + 1];
  if (value === undefined) throw new Error(`missing ${name}`);
  return value;
}

const server = createSecureServer(
  { key: readFileSync(argument('--key')), cert: readFileSync(argument('--cert')), allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } },
  (request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(ANSWER);
    });
  },
);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`LISTENING https://127.0.0.1:${address.port}\n`);
});
if (process.argv.includes('--exit-on-stdin-close')) {
  process.stdin.resume();
  process.stdin.on('close', () => process.exit(0));
}
