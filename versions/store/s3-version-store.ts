import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { parseVersionInfo } from '../version-info.ts';
import { fileNameOf, labelFromFileName, VERSION_FILE_SUFFIX } from '../version-label.ts';
import type { S3StoreSettings } from '../../shared/config.ts';
import { PART_SUFFIX, type FilePart, type StoredFile, type VersionFileStore } from './version-file-store.ts';
import { parseVersionRecord, RECORD_SUFFIX, type VersionRecord } from '../version-record.ts';

/** Multipart parts of 64 MiB, 4 in flight: a multi-GB version uploads in parallel parts, with bounded memory (~256 MiB). */
const PART_BYTES = 64 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;

/**
 * A version record from a data object's metadata: how releases before schema 5 recorded a
 * version (a whole copy: sha256, drop id and facts in the object's metadata, no record object).
 * Objects stored since carry `file-only` and get their record as an object of its own.
 */
function legacyRecordOf(metadata: Record<string, string>, bytes: number): VersionRecord | null {
  if (!metadata['sha256'] || metadata['file-only']) return null;
  let info = null;
  try {
    info = metadata['version-info'] ? parseVersionInfo(JSON.parse(metadata['version-info'])) : null;
  } catch {
    info = null;
  }
  return parseVersionRecord({ sha256: metadata['sha256'], bytes, dropId: metadata['drop-id'] ?? '', ...(info ? { info } : {}) }, bytes);
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

/**
 * A version store in an S3 bucket: files are `<prefix>/<label>.duckdb`, records
 * `<prefix>/<label>.duckdb.facts.json`. An object becomes visible only once its upload is
 * complete (S3 commits a multipart upload atomically), so a listed file is always whole; the
 * record is written after its file.
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

  #key(label: string, part: FilePart = 'data'): string {
    const name = part === 'data' ? fileNameOf(label) : label + PART_SUFFIX[part];
    return this.#settings.prefix ? `${this.#settings.prefix}/${name}` : name;
  }

  /** Every object under the prefix: data files by label with their sizes, and the labels with a record. */
  async #objects(): Promise<{ files: StoredFile[]; records: Set<string> }> {
    const prefix = this.#settings.prefix ? this.#settings.prefix + '/' : '';
    const files: StoredFile[] = [];
    const records = new Set<string>();
    let token: string | undefined;
    do {
      const page = await this.#s3.send(new ListObjectsV2Command({ Bucket: this.#settings.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const name = (o.Key ?? '').slice(prefix.length);
        if (name.includes('/')) continue;
        const parsed = labelFromFileName(name);
        if (parsed) files.push({ ...parsed, bytes: o.Size ?? 0 });
        else if (name.endsWith(RECORD_SUFFIX) && labelFromFileName(name.slice(0, -RECORD_SUFFIX.length))) records.add(name.slice(0, -RECORD_SUFFIX.length - VERSION_FILE_SUFFIX.length));
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return { files: files.sort((a, b) => a.builtAtEpoch - b.builtAtEpoch || a.label.localeCompare(b.label)), records };
  }

  async list(): Promise<StoredFile[]> {
    const { files, records } = await this.#objects();
    return files.filter((f) => records.has(f.label));
  }

  async files(): Promise<StoredFile[]> {
    return (await this.#objects()).files;
  }

  async #text(key: string): Promise<string | null> {
    try {
      const got = await this.#s3.send(new GetObjectCommand({ Bucket: this.#settings.bucket, Key: key }));
      return got.Body ? await got.Body.transformToString('utf8') : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async #head(label: string, part: FilePart = 'data'): Promise<{ bytes: number; metadata: Record<string, string> } | null> {
    try {
      const head = await this.#s3.send(new HeadObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label, part) }));
      return { bytes: head.ContentLength ?? 0, metadata: head.Metadata ?? {} };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async record(label: string): Promise<VersionRecord | null> {
    const head = await this.#head(label);
    if (!head) return null;
    const text = await this.#text(this.#key(label) + RECORD_SUFFIX);
    if (text === null) return null;
    try {
      return parseVersionRecord(JSON.parse(text), head.bytes);
    } catch {
      return null;
    }
  }

  /**
   * Gives each version stored by a release before schema 5 (its record in the object's metadata)
   * a record object, so that it is listed and can expire like any other. Idempotent.
   * @returns the labels given a record.
   */
  async adoptLegacy(): Promise<string[]> {
    const { files, records } = await this.#objects();
    const adopted: string[] = [];
    for (const f of files.filter((x) => !records.has(x.label))) {
      const head = await this.#head(f.label);
      const record = head ? legacyRecordOf(head.metadata, head.bytes) : null;
      if (!record) continue;
      await this.putRecord(f.label, record);
      adopted.push(f.label);
    }
    return adopted;
  }

  async putFile(label: string, localFile: string, part: FilePart = 'data'): Promise<void> {
    if (await this.#head(label, part)) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} is stored already`);
    const bytes = (await stat(localFile)).size;
    const upload = new Upload({
      client: this.#s3, partSize: PART_BYTES, queueSize: PARTS_IN_FLIGHT, leavePartsOnError: false,
      params: {
        Bucket: this.#settings.bucket, Key: this.#key(label, part), Body: createReadStream(localFile, { highWaterMark: 1 << 20 }),
        ContentLength: bytes, ContentType: 'application/octet-stream', Metadata: { 'file-only': '1' },
      },
    });
    await upload.done();
  }

  async putRecord(label: string, record: VersionRecord): Promise<void> {
    await this.#s3.send(new PutObjectCommand({
      Bucket: this.#settings.bucket, Key: this.#key(label) + RECORD_SUFFIX, Body: JSON.stringify(record) + '\n', ContentType: 'application/json',
    }));
  }

  async download(label: string, destFile: string, part: FilePart = 'data'): Promise<string> {
    let got;
    try {
      got = await this.#s3.send(new GetObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label, part) }));
    } catch (err) {
      if (isNotFound(err)) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `version ${label} is not stored`);
      throw err;
    }
    if (!got.Body) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `version ${label} is not stored`);
    const hash = createHash('sha256');
    await pipeline(got.Body as Readable, async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        yield chunk;
      }
    }, createWriteStream(destFile, { flags: 'wx' }));
    return hash.digest('hex');
  }

  async removeRecord(label: string): Promise<void> {
    await this.#s3.send(new DeleteObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label) + RECORD_SUFFIX }));
  }

  async removeFile(label: string): Promise<void> {
    await this.removeRecord(label);
    await this.#s3.send(new DeleteObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label, 'lookup') }));
    await this.#s3.send(new DeleteObjectCommand({ Bucket: this.#settings.bucket, Key: this.#key(label) }));
  }

  async close(): Promise<void> {
    this.#s3.destroy();
  }
}
