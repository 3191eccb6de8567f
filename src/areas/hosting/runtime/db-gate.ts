import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

// A project's database socket (decision 067): a Unix socket in the project's socket folder, bound into its
// app's sandbox, that speaks the start of the Postgres wire protocol itself. It asks for the project's own
// password (cleartext is fine on a local socket), refuses any other user or database, and only then opens the
// real database — the project's PGlite server, or PostgreSQL, whose loopback the app cannot reach at all —
// replaying a start-up message that names the project's own role and database. After that it only pipes bytes.

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** Start-up parameters passed on; anything else (options=-c …, replication) is dropped. */
const PASSED = new Set([
  'application_name',
  'client_encoding',
  'datestyle',
  'timezone',
  'extra_float_digits',
]);
const MAX_STARTUP = 10_000;

export type DbGateOptions = {
  /** The socket file, e.g. <run>/db/.s.PGSQL.5432. */
  socketPath: string;
  role: string;
  /** The database the client must name; the upstream gets `upstreamDatabase` (PGlite has only `postgres`). */
  database: string;
  upstreamDatabase?: string;
  upstreamUser?: string;
  password: string;
  upstream: () => net.Socket;
};

function errorResponse(code: string, message: string): Buffer {
  const body = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function startupMessage(params: [string, string][]): Buffer {
  const body = Buffer.from(`${params.map(([k, v]) => `${k}\0${v}\0`).join('')}\0`);
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(PROTOCOL_3, 4);
  return Buffer.concat([head, body]);
}

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

export class DbGate {
  readonly #o: DbGateOptions;
  readonly #server: net.Server;
  readonly #open = new Set<net.Socket>();

  private constructor(o: DbGateOptions) {
    this.#o = o;
    this.#server = net.createServer((s) => this.#accept(s));
  }

  static async listen(o: DbGateOptions): Promise<DbGate> {
    fs.mkdirSync(path.dirname(o.socketPath), { recursive: true });
    fs.rmSync(o.socketPath, { force: true });
    const gate = new DbGate(o);
    await new Promise<void>((resolve, reject) => {
      gate.#server.once('error', reject);
      gate.#server.listen(o.socketPath, () => resolve());
    });
    // The folder is the app's (0700, its uid); the socket must be connectable by that uid when Pier is root.
    fs.chmodSync(o.socketPath, 0o666);
    return gate;
  }

  async close(): Promise<void> {
    for (const s of this.#open) s.destroy();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  #accept(client: net.Socket): void {
    this.#open.add(client);
    client.once('close', () => this.#open.delete(client));
    client.on('error', () => client.destroy());
    let buf = Buffer.alloc(0);
    let stage: 'startup' | 'password' = 'startup';
    let params: [string, string][] = [];
    const fail = (code: string, message: string) => {
      client.end(errorResponse(code, message));
    };
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length > MAX_STARTUP) return client.destroy();
      while (true) {
        if (stage === 'startup') {
          if (buf.length < 8) return;
          const len = buf.readInt32BE(0);
          if (len < 8 || len > MAX_STARTUP) return client.destroy();
          if (buf.length < len) return;
          const code = buf.readInt32BE(4);
          const body = buf.subarray(8, len);
          buf = buf.subarray(len);
          if (code === SSL_REQUEST || code === GSS_REQUEST) {
            client.write('N');
            continue;
          }
          if (code === CANCEL_REQUEST || code !== PROTOCOL_3) return client.destroy();
          const parts = body.toString('utf8').split('\0');
          params = [];
          for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) params.push([parts[i]!, parts[i + 1]!]);
          const get = (k: string) => params.find(([n]) => n === k)?.[1];
          const user = get('user');
          const database = get('database') || user;
          if (user !== this.#o.role)
            return fail('28P01', `password authentication failed for user "${user ?? ''}"`);
          if (database !== this.#o.database)
            return fail('3D000', `database "${database}" does not exist or is not yours`);
          stage = 'password';
          const ask = Buffer.alloc(9);
          ask.write('R', 0);
          ask.writeInt32BE(8, 1);
          ask.writeInt32BE(3, 5); // AuthenticationCleartextPassword
          client.write(ask);
          continue;
        }
        if (buf.length < 5) return;
        const len = buf.readInt32BE(1);
        if (buf[0] !== 0x70 /* 'p' */ || len < 5 || len > MAX_STARTUP) return client.destroy();
        if (buf.length < len + 1) return;
        const given = buf
          .subarray(5, len + 1)
          .toString('utf8')
          .replace(/\0$/, '');
        buf = buf.subarray(len + 1);
        client.off('data', onData);
        if (!crypto.timingSafeEqual(digest(given), digest(this.#o.password)))
          return fail('28P01', `password authentication failed for user "${this.#o.role}"`);
        return this.#connect(client, params, buf);
      }
    };
    client.on('data', onData);
  }

  #connect(client: net.Socket, params: [string, string][], rest: Buffer): void {
    client.pause();
    const up = this.#o.upstream();
    const pinned: [string, string][] = [
      ['user', this.#o.upstreamUser ?? this.#o.role],
      ['database', this.#o.upstreamDatabase ?? this.#o.database],
      ...params.filter(([k]) => PASSED.has(k.toLowerCase())),
    ];
    up.once('connect', () => {
      up.write(startupMessage(pinned));
      if (rest.length) up.write(rest);
      up.pipe(client);
      client.pipe(up);
      client.resume();
    });
    const end = () => {
      up.destroy();
      client.destroy();
    };
    up.on('error', () => {
      if (!client.destroyed) client.end(errorResponse('08006', 'the database is not available'));
      up.destroy();
    });
    up.on('close', end);
    client.on('close', end);
  }
}
