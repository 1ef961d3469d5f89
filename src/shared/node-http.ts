import { createRequire } from 'node:module';
import type * as NodeHttp from 'node:http';

/**
 * node:http's values, taken through `require`. An ECMAScript import of node:http reads every export of the module,
 * its lazy WebSocket, MessageEvent and CloseEvent too, and so loads Node's own copy of undici (2 to 13 MiB of
 * resident memory) in a process that never uses it. Import the values from here; types still come from node:http.
 */
const http = createRequire(import.meta.url)('node:http') as typeof NodeHttp;

export const { createServer, ServerResponse } = http;
