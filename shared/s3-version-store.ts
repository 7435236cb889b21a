import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { AppError, ErrorCodes } from './errors.ts';
import { parseVersionInfo } from './version-info.ts';
import { fileNameOf, labelFromFileName } from './version-label.ts';
import type { StoredFacts, StoredVersion, VersionFileStore } from './version-file-store.ts';

/** Where the store is and how to reach it (from VERSION_STORE and the S3_* / AWS_* settings). */
export interface S3StoreSettings {
  readonly bucket: string;
  /** Key prefix without a trailing slash ('' for the bucket's root). */
  readonly prefix: string;
  /** For S3-compatible servers (MinIO, R2, ...); null for AWS itself. */
  readonly endpoint: string | null;
  readonly region: string;
  readonly forcePathStyle: boolean;
  /** Null: the SDK's default chain (instance roles, shared config files). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | null;
}

/** Multipart parts of 64 MiB, 4 in flight: a multi-GB version uploads in parallel parts, with bounded memory (~256 MiB). */
const PART_BYTES = 64 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;

/** The facts in an object's metadata (its version_info is JSON; unreadable JSON counts as absent). */
function factsOf(sha256: string, metadata: Record<string, string>): StoredFacts {
  let info = null;
  try {
    info = metadata['version-info'] ? parseVersionInfo(JSON.parse(metadata['version-info'])) : null;
  } catch {
    info = null;
  }
  return { sha256, dropId: metadata['drop-id'] ?? '', ...(info ? { info } : {}) };
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

/**
 * A version store in an S3 bucket: `<prefix>/<label>.duckdb`, its sha256 and drop id in the
 * object's metadata. An object becomes visible only once its upload is complete (S3 commits a
 * multipart upload atomically), so a listed version is always fully stored with its checksum.
 */
export class S3VersionStore implements VersionFileStore {
  readonly #s3: S3Client;
  readonly #settings: S3StoreSettings;

  constructor(settings: S3StoreSettings) {
    this.#settings = settings;
    const config: S3ClientConfig = { region: settings.region, forcePathStyle: settings.forcePathStyle };
    if (settings.endpoint) config.endpoint = settings.endpoint;
    if (settings.credentials) config.credentials = settings.credentials;
    this.#s3 = new S3Client(config);
  }

  get description(): string {
    return `s3://${this.#settings.bucket}/${this.#settings.prefix}`;
  }

  #key(label: string): string {
    return this.#settings.prefix ? `${this.#settings.prefix}/${fileNameOf(label)}` : fileNameOf(label);
  }

  async list(): Promise<StoredVersion[]> {
    const prefix = this.#settings.prefix ? this.#settings.prefix + '/' : '';
    const out: StoredVersion[] = [];
    let token: string | undefined;
    do {
      const page = await this.#s3.send(new ListObjectsV2Command({ Bucket: this.#settings.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const name = (o.Key ?? '').slice(prefix.length);
        const parsed = name.includes('/') ? null : labelFromFileName(name);
        if (parsed) out.push({ ...parsed, bytes: o.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => a.builtAtEpoch - b.builtAtEpoch || a.label.localeCompare(b.label));
  }

  async put(label: string, localFile: string, facts: StoredFacts): Promise<void> {
    if (await this.facts(label)) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} is stored already`);
    const bytes = (await stat(localFile)).size;
    const upload = new Upload({
      client: this.#s3, partSize: PART_BYTES, queueSize: PARTS_IN_FLIGHT, leavePartsOnError: false,
      params: {
        Bucket: this.#settings.bucket, Key: this.#key(label), Body: createReadStream(localFile, { highWaterMark: 1 << 20 }),
        ContentLength: bytes, ContentType: 'application/octet-stream', Metadata: { sha256: facts.sha256, 'drop-id': facts.dropId, ...(facts.info ? { 'version-info': JSON.stringify(facts.info) } : {}) },
      },
    });
    await upload.done();
  }

  async facts(label: string): Promise<StoredFacts | null> {
    try {
      const head = await this.#s3.send(new HeadObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label) }));
      const sha256 = head.Metadata?.['sha256'];
      return sha256 ? factsOf(sha256, head.Metadata ?? {}) : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async download(label: string, destFile: string): Promise<StoredFacts> {
    let got;
    try {
      got = await this.#s3.send(new GetObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label) }));
    } catch (err) {
      if (isNotFound(err)) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `version ${label} is not stored`);
      throw err;
    }
    const sha256 = got.Metadata?.['sha256'];
    if (!sha256 || !got.Body) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} is stored without its checksum`);
    await pipeline(got.Body as Readable, createWriteStream(destFile, { flags: 'wx' }));
    return factsOf(sha256, got.Metadata ?? {});
  }

  async remove(label: string): Promise<void> {
    await this.#s3.send(new DeleteObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label) }));
  }

  async close(): Promise<void> {
    this.#s3.destroy();
  }
}
