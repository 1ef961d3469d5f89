import net from 'node:net';

/** One command a client sent to Redis, with the connection's name (CLIENT SETNAME) when it gave one. */
export interface ProxiedCommand {
  connection: string | null;
  args: string[];
}

interface ProxiedConnection {
  name: string | null;
  client: net.Socket;
  /** Replies held back from the client while its connection's name is held. */
  held: Buffer[];
}

/**
 * A TCP proxy on 127.0.0.1 in front of Redis that reads the commands clients send (RESP arrays) and keeps them, in
 * the order they were sent, so a test can count the commands a request costs. It can also hold back the replies to a
 * named connection (to make one connection's answers arrive late) and cut named connections.
 */
export class RedisCommandProxy {
  readonly commands: ProxiedCommand[] = [];
  readonly #sockets = new Set<net.Socket>();
  readonly #connections = new Set<ProxiedConnection>();
  readonly #heldNames = new Set<string>();

  private constructor(readonly server: net.Server, readonly url: string) {}

  static async start(target: string): Promise<RedisCommandProxy> {
    const { hostname, port } = new URL(target);
    if (hostname !== '127.0.0.1' && hostname !== 'localhost') throw new Error('the proxy fronts a Redis on 127.0.0.1 only');
    const clients: net.Socket[] = [];
    let accept = (client: net.Socket): void => void clients.push(client);
    const server = net.createServer((client) => accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as net.AddressInfo;
    const proxy = new RedisCommandProxy(server, `redis://127.0.0.1:${address.port}`);
    accept = (client) => proxy.#accept(client, Number(port || 6379));
    for (const client of clients) accept(client);
    return proxy;
  }

  /** Replies to connections named `name` wait until `release(name)`. */
  hold(name: string): void {
    this.#heldNames.add(name);
  }

  release(name: string): void {
    this.#heldNames.delete(name);
    for (const connection of this.#connections) {
      if (connection.name !== name) continue;
      for (const chunk of connection.held.splice(0)) connection.client.write(chunk);
    }
  }

  /** Cuts every connection named `name`, as a network failure would. */
  drop(name: string): void {
    for (const connection of this.#connections) if (connection.name === name) connection.client.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  #accept(client: net.Socket, port: number): void {
    const upstream = net.connect(port, '127.0.0.1');
    this.#sockets.add(client).add(upstream);
    const proxied: ProxiedConnection = { name: null, client, held: [] };
    this.#connections.add(proxied);
    let pending: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = readCommand(pending);
        if (parsed === null) break;
        pending = pending.subarray(parsed.end);
        const [name, sub, value] = parsed.args;
        if (name?.toLowerCase() === 'client' && sub?.toLowerCase() === 'setname' && value !== undefined) proxied.name = value;
        this.commands.push({ connection: proxied.name, args: parsed.args });
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (proxied.name !== null && this.#heldNames.has(proxied.name)) proxied.held.push(chunk);
      else client.write(chunk);
    });
    const close = (): void => {
      this.#connections.delete(proxied);
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  }
}

/** One RESP array of bulk strings from the start of `buffer`, or null when it has not fully arrived yet. */
function readCommand(buffer: Buffer): { args: string[]; end: number } | null {
  if (buffer.length === 0) return null;
  if (buffer[0] !== 0x2a) throw new Error('only RESP arrays are expected from a client');
  let offset = 0;
  const line = (): string | null => {
    const end = buffer.indexOf('\r\n', offset);
    if (end < 0) return null;
    const text = buffer.toString('latin1', offset, end);
    offset = end + 2;
    return text;
  };
  const header = line();
  if (header === null) return null;
  const count = Number(header.slice(1));
  const args: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const length = line();
    if (length === null) return null;
    const size = Number(length.slice(1));
    if (buffer.length < offset + size + 2) return null;
    args.push(buffer.toString('utf8', offset, offset + size));
    offset += size + 2;
  }
  return { args, end: offset };
}
