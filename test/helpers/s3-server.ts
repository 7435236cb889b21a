import { spawn } from 'node:child_process';
import path from 'node:path';
import { S3VersionStore } from '../../versions/store/s3-version-store.ts';

/** Credentials s3rver accepts (its fixed test pair). */
export const S3RVER_KEYS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' } as const;

/**
 * An S3-protocol server (s3rver, in its own process: see s3-server-main.ts) on `port` (default:
 * a free one), storing in `dir`, with `bucket` created. `kill()` ends it with SIGKILL (a store
 * that dies mid-transfer); started again on the same port and folder, it serves the same objects.
 */
export async function startS3Server(dir: string, bucket: string, port0 = 0): Promise<{ endpoint: string; port: number; close(): Promise<void>; kill(): Promise<void> }> {
  const child = spawn(process.execPath, [path.resolve('test/helpers/s3-server-main.ts'), dir, bucket, String(port0)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`s3rver did not start:\n${out}`)), 15_000);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', () => reject(new Error(`s3rver exited:\n${out}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A version store in `bucket` under `prefix` of the s3rver at `endpoint`, with its test credentials. */
export function s3StoreAt(endpoint: string, bucket = 'versions', prefix = 'v'): S3VersionStore {
  return new S3VersionStore({ bucket, prefix, endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: S3RVER_KEYS.AWS_SECRET_ACCESS_KEY } });
}
