import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A port nothing listens on right now (the OS's pick for port 0). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A private redis-server child (no persistence) that a test can kill, pause and restart on the
 * same port, to fault the Redis the API depends on without touching the shared one.
 */
export class RedisServer {
  readonly port: number;
  #child: ChildProcess | null = null;

  private constructor(port: number) {
    this.port = port;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again) on its port and waits until it accepts connections. */
  async restart(): Promise<void> {
    if (this.#child) throw new Error('redis-server is already running');
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited:\n${out}`));
      });
    });
  }

  /** SIGKILL: the connection drops as in a crash; the data is gone (no persistence). */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGSTOP / SIGCONT: connections stay open but nothing answers (a hung Redis). */
  pause(): void {
    this.#child?.kill('SIGSTOP');
  }

  resume(): void {
    this.#child?.kill('SIGCONT');
  }
}
