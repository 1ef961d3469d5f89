/**
 * Seeded generators of malformed requests for the fuzz test: random JSON shapes, wrong types, deep nesting,
 * truncated and oversized bodies, odd encodings and content types, built around a valid skeleton per endpoint.
 */
import fc from 'fast-check';

export interface Endpoint {
  method: string;
  path: string;
  /** A valid body to mutate; null for endpoints without a body. */
  skeleton: Record<string, unknown> | null;
  /** Header that carries the credential (null: none, e.g. public endpoints). */
  auth: 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'admin' | null;
}

export interface FuzzRequest {
  endpoint: Endpoint;
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: Record<string, string>;
  body: Uint8Array | null;
  /** Which mutation produced it, for failure reports. */
  mutation: string;
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A JSON value of any shape and type. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, 1e21, '', ' ', '\u0000', '\ud800', 'a'.repeat(5000), [], {}, [[]], { '': null }),
  fc.string({ maxLength: 50, unit: 'binary' }),
);

function countPaths(skeleton: Record<string, unknown>): number {
  let count = 0;
  const visit = (node: unknown, depth: number): void => {
    if (depth > 8 || node === null || typeof node !== 'object') return;
    for (const child of Object.values(node)) {
      count += 1;
      visit(child, depth + 1);
    }
  };
  visit(skeleton, 0);
  return count;
}

function withValueAt(skeleton: Record<string, unknown>, pathChoice: number, value: unknown): Record<string, unknown> {
  const copy = structuredClone(skeleton);
  const paths: Array<[Record<string, unknown> | unknown[], string | number]> = [];
  const visit = (node: unknown, depth: number): void => {
    if (depth > 8 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) node.forEach((child, index) => { paths.push([node, index]); visit(child, depth + 1); });
    else for (const [key, child] of Object.entries(node)) { paths.push([node as Record<string, unknown>, key]); visit(child, depth + 1); }
  };
  visit(copy, 0);
  if (paths.length === 0) return { ...copy, fuzz: value };
  const [parent, key] = paths[pathChoice % paths.length] as [Record<string, unknown>, string];
  parent[key] = value;
  return copy;
}

function dropAt(skeleton: Record<string, unknown>, pathChoice: number): Record<string, unknown> {
  const keys = Object.keys(skeleton);
  if (keys.length === 0) return skeleton;
  const copy = { ...skeleton };
  delete copy[keys[pathChoice % keys.length] as string];
  return copy;
}

function nestedText(depth: number, open: string, close: string, inner: string): string {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}

/**
 * Nesting around the limit and far past it, either in place of a field (which validation may refuse first) or as
 * an extra field (which must survive to the pass-through path, where the body is serialised again).
 */
function deepArbitrary(base: Record<string, unknown>): fc.Arbitrary<[string, Uint8Array]> {
  return fc.tuple(fc.constantFrom(63, 65, 5000, 100_000, 100_000, 100_000), fc.constantFrom(['[', ']'], ['{"a":', '}']), fc.nat(), fc.boolean())
    .map(([depth, [open, close], at, inPlace]): [string, Uint8Array] => {
      const marker = '"__DEEP__"';
      const template = JSON.stringify(inPlace ? withValueAt(base, at, '__DEEP__') : { ...base, fuzz_extra: '__DEEP__' });
      return [`deep-${depth}${inPlace ? '' : '-extra'}`, utf8(template.replace(marker, nestedText(depth, open as string, close as string, '0')))];
    });
}

/** Bodies as bytes, given the endpoint's skeleton and the body size limit. */
function bodyArbitrary(skeleton: Record<string, unknown> | null, maxBodyBytes: number): fc.Arbitrary<[string, Uint8Array | null]> {
  const base = skeleton ?? {};
  const text = JSON.stringify(base);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<[string, Uint8Array | null]>(['valid', utf8(text)]) },
    { weight: 2, arbitrary: fc.tuple(fc.nat(), anyValue).map(([at, value]): [string, Uint8Array] => ['wrong-type', utf8(JSON.stringify(withValueAt(base, at, value)))]) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 20 }), anyValue).map(([key, value]): [string, Uint8Array] => ['extra-field', utf8(JSON.stringify({ ...base, [key]: value }))]) },
    { weight: 1, arbitrary: fc.nat().map((at): [string, Uint8Array] => ['missing-field', utf8(JSON.stringify(dropAt(base, at)))]) },
    { weight: 1, arbitrary: anyValue.map((value): [string, Uint8Array] => ['random-json', utf8(JSON.stringify(value) ?? 'null')]) },
    { weight: 4, arbitrary: deepArbitrary(base) },
    { weight: 1, arbitrary: fc.nat({ max: Math.max(1, text.length - 1) }).map((cut): [string, Uint8Array] => ['truncated', utf8(text.slice(0, cut))]) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2000 }).map((bytes): [string, Uint8Array] => ['random-bytes', bytes]) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('utf16', 'bom', 'invalid-utf8', 'lone-surrogate', 'empty', 'no-body', 'form', 'oversized', 'huge-array', 'many-keys')
        .map((name): [string, Uint8Array | null] => [name, oddBody(name, base, text, maxBodyBytes)]),
    },
  );
}

/** Bodies that are expensive to build are built only when drawn. */
function oddBody(name: string, base: Record<string, unknown>, text: string, maxBodyBytes: number): Uint8Array | null {
  switch (name) {
    case 'utf16':
      return new Uint8Array(Buffer.from(text, 'utf16le'));
    case 'bom':
      return new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]));
    case 'invalid-utf8':
      return new Uint8Array(Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('}')]));
    case 'lone-surrogate':
      return utf8(JSON.stringify(withValueAt(base, 0, 'x')).replace('"x"', '"\\udc00\\ud800"'));
    case 'empty':
      return new Uint8Array(0);
    case 'form':
      return utf8('model=x&messages=y');
    case 'oversized':
      return utf8(JSON.stringify({ ...base, padding: 'p'.repeat(maxBodyBytes + 10) }));
    case 'huge-array':
      return utf8(JSON.stringify(withValueAt(base, 0, Array.from({ length: 20_000 }, () => 0))));
    case 'many-keys':
      return utf8(JSON.stringify({ ...base, ...Object.fromEntries(Array.from({ length: 5000 }, (_unused, index) => [`k${index}`, index])) }));
    default:
      return null;
  }
}

const contentTypeArbitrary = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=zz', 'multipart/form-data', 'application/json; charset=utf-16', '', '\u00ff/\u00ff') },
);

const queryArbitrary = fc.oneof(
  { weight: 5, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('?alt=sse', '?key=', '?key=%zz', '?limit=-1', '?limit=abc&cursor=%%%', '?from=9999999999999&to=-5', '?cursor=bm90LWpzb24', `?x=${'q'.repeat(4000)}`) },
);

function headersFor(endpoint: Endpoint, credentials: { key: string; adminToken: string }, contentType: string, hasBody: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  if (contentType !== '' && hasBody) headers['content-type'] = contentType;
  switch (endpoint.auth) {
    case 'bearer':
      headers.authorization = `Bearer ${credentials.key}`;
      break;
    case 'x-api-key':
      headers['x-api-key'] = credentials.key;
      headers['anthropic-version'] = '2023-06-01';
      break;
    case 'x-goog-api-key':
      headers['x-goog-api-key'] = credentials.key;
      break;
    case 'admin':
      headers.authorization = `Bearer ${credentials.adminToken}`;
      break;
    case null:
      break;
  }
  return headers;
}

/**
 * The attack classes known to have broken the gateway, swept over every endpoint before the random phase: nesting
 * far past the limit in every field of the skeleton and as an extra field, thousands of unknown fields, and a body
 * just over the size limit.
 */
export function sweepRequests(endpoints: Endpoint[], credentials: { key: string; adminToken: string }, maxBodyBytes: number): FuzzRequest[] {
  const requests: FuzzRequest[] = [];
  for (const endpoint of endpoints) {
    if (endpoint.skeleton === null) continue;
    const base = endpoint.skeleton;
    const deep = nestedText(100_000, '[', ']', '0');
    const bodies: Array<[string, Uint8Array | null]> = [
      ['deep-100000-extra', utf8(JSON.stringify({ ...base, fuzz_extra: '__DEEP__' }).replace('"__DEEP__"', deep))],
      ['many-keys', oddBody('many-keys', base, '', maxBodyBytes)],
      ['oversized', oddBody('oversized', base, '', maxBodyBytes)],
    ];
    for (let at = 0; at < countPaths(base); at += 1) {
      bodies.push([`deep-100000@${at}`, utf8(JSON.stringify(withValueAt(base, at, '__DEEP__')).replace('"__DEEP__"', deep))]);
    }
    for (const [mutation, body] of bodies) {
      requests.push({ endpoint, method: endpoint.method, url: endpoint.path, headers: headersFor(endpoint, credentials, 'application/json', true), body, mutation });
    }
  }
  return requests;
}

/** One fuzzed request for one of `endpoints`, authenticated with `credential` (`admin` uses `adminToken`). */
export function requestArbitrary(endpoints: Endpoint[], credentials: { key: string; adminToken: string }, maxBodyBytes: number): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...endpoints.map((endpoint) => fc.record({
    body: bodyArbitrary(endpoint.skeleton, maxBodyBytes),
    contentType: contentTypeArbitrary,
    query: queryArbitrary,
    wrongMethod: fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'POST') }),
  }).map(({ body: [mutation, body], contentType, query, wrongMethod }): FuzzRequest => {
    const method = wrongMethod ?? endpoint.method;
    return { endpoint, method, url: endpoint.path + query, headers: headersFor(endpoint, credentials, contentType, body !== null), body: method === 'GET' ? null : body, mutation };
  })));
}
