import { mkdir, stat } from 'node:fs/promises';
import { withReadOnly } from '../../shared/duckdb-open.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { filesOf } from '../../versions/version-manifest.ts';
import { makeLabel, assertReleaseMonth } from '../../versions/version-label.ts';
import type { VersionRecord } from '../../versions/version-record.ts';
import { TABLES } from '../../versions/version-schema.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { verifyBuiltFile } from '../../versions/verify-built-file.ts';
import { readVersionInfo } from '../../versions/version-info.ts';
import { buildVersion, type BuildSettings, type LoadProgress } from '../build/build-version.ts';
import { readOpened, type DropIdentity, type ReadDrop } from '../drop/drop-id.ts';
import { listDrop } from '../drop/list-drop.ts';
import { openDrop, type OpenedFile } from '../drop/open-drop.ts';
import { resourceError } from '../drop/load-failure.ts';
import type { LoadReport } from '../drop/load-report.ts';
import { buildTempPath, cleanStaleBuilds, removeBuildFiles } from '../build/temp-files.ts';
import { adoptWholeCopies } from '../../versions/adopt-whole-copies.ts';
import { findLoaded, type AlreadyLoaded } from './find-loaded.ts';
import { readBase } from './read-base.ts';
import { retainAfter, type RetentionPlan } from '../../versions/retention/retention.ts';
import { checkGuards } from './publish-guards.ts';
import { assertReleaseOrder } from './release-order.ts';
import { demoBase, removeDemoVersions } from './demo-versions.ts';
import type { GuardThresholds } from '../../shared/guard-thresholds.ts';
import type { HeldReason, HeldState } from '../../shared/held-state.ts';

/** Builds tried before giving up for this attempt (a queued load is retried later). */
const MAX_REBUILDS = 5;

export interface LoadOptions {
  /** The drop as the operator names it (folders, files, globs), or the files an enqueue listed (`enqueued`). */
  readonly inputs: readonly string[];
  /**
   * The inputs are a queued job's files, as its enqueue listed them: each is taken as it sits (a
   * link there now is refused, never resolved: ingest/drop/list-drop.ts), not as an operator's argument.
   */
  readonly enqueued?: boolean;
  readonly month: string | null;
  readonly settings: BuildSettings;
  /** Versions to keep after publishing (default: keep all). */
  readonly retain?: number;
  /**
   * For queued loads: the drop id the job was enqueued with. The load fails if the files changed
   * since, and if a retained version was already built from this drop it is reported, never
   * built twice (see findLoaded).
   */
  readonly expectedDropId?: string;
  readonly onProgress?: (progress: LoadProgress) => void;
  readonly now?: () => Date;
  /**
   * The publish guards' thresholds (config PUBLISH_GUARDS, GUARD_*), or null/absent for none
   * (`--force`): a build whose profile breaches one is stored and recorded held, not published.
   */
  readonly guards?: GuardThresholds | null;
  /**
   * Publish the drop even when its release month is older than the version in service's
   * (`--allow-older`): an operator's decision. Without it such a load is refused with
   * OLDER_RELEASE (see release-order.ts).
   */
  readonly allowOlder?: boolean;
  /** The bundled demo's own load (`placedata demo`): its version is marked demo, and it is never built on real data. */
  readonly demo?: boolean;
  /**
   * A real drop's load where the demo is in service (`--replace-demo`): it builds on nothing and,
   * once published, deletes the demo versions. Without it such a load is refused with DEMO_DATA.
   */
  readonly replaceDemo?: boolean;
}

export interface LoadResult {
  readonly label: string;
  /** The version's own file on this machine. */
  readonly file: string;
  readonly report: LoadReport;
  readonly dropId: string;
  /** True when a retained version had already been built from this drop (nothing was built). */
  readonly alreadyLoaded: boolean;
  /** The version served when the load ended (with alreadyLoaded, not necessarily this one). */
  readonly current: string | null;
  /** Versions retention expired after this publish. */
  readonly removedVersions: readonly string[];
  /** Files retention deleted (expired versions' files no retained version inherits from). */
  readonly removedFiles: readonly string[];
  /** The guards the build breached, when it was held instead of published (null: not held). */
  readonly held: readonly HeldReason[] | null;
  /** The demo versions this load deleted when it published (`replaceDemo`); usually none. */
  readonly removedDemo: readonly string[];
}

async function reportOf(file: string, memoryLimit: string): Promise<LoadReport> {
  return await withReadOnly(file, { memoryLimit, threads: 1 }, async (conn) => {
    return JSON.parse(String((await conn.runAndReadAll(`SELECT CAST(report AS VARCHAR) AS r FROM ${TABLES.info}`)).getRowObjectsJS()[0]!['r'])) as LoadReport;
  });
}

/** What an already-loaded drop reports: its version, where the pointer is, and the version's report. */
async function alreadyLoaded(site: VersionSite, drop: DropIdentity, opts: LoadOptions): Promise<LoadResult | null> {
  const found = await site.lock.using(async () => {
    await adoptWholeCopies(site, opts.settings.memoryLimit);
    return findLoaded(site, drop.id);
  });
  return found ? reportLoaded(site, drop, found, opts) : null;
}

async function reportLoaded(site: VersionSite, drop: DropIdentity, found: AlreadyLoaded, opts: LoadOptions): Promise<LoadResult> {
  const file = await site.cache.ensure(found.label, (await site.store.record(found.label))!.sha256);
  return { label: found.label, file, report: await reportOf(file, opts.settings.memoryLimit), dropId: drop.id, alreadyLoaded: true, current: found.current, removedVersions: [], removedFiles: [], held: found.held, removedDemo: [] };
}

/**
 * The one load pipeline, on one machine and on many (the site's store, pointer, lock and cache
 * differ, not the steps): read the pointer (the base) and the base's manifest, build a file
 * holding what the drop delivered and naming the base's files for the rest (refused as soon as
 * its release month is known to be older than the base's, unless allowOlder), verify and hash it;
 * then under the publish lock: if the pointer no longer names the base (another load or a
 * rollback published meanwhile) or the label was taken, drop the build and start again from the
 * new pointer; else store the file, then its record, stage it on the web processes (many
 * machines), move the pointer by compare-and-set and apply retention. Until the pointer moves,
 * nothing served changes; a load killed at any moment leaves at most a build file (removed by the
 * next load), an unrecorded stored file (removed by retention) or a recorded version the pointer
 * never named (made current by the job's retry, see findLoaded).
 */
export async function loadDrop(opts: LoadOptions, site: VersionSite): Promise<LoadResult> {
  if (opts.month !== null) assertReleaseMonth(opts.month);
  const progress = opts.onProgress ?? (() => undefined);
  await mkdir(site.cache.dir, { recursive: true });
  await cleanStaleBuilds(site.cache.dir, opts.settings.tempDir);
  // The drop's files are listed and opened once, and every read of the load (hash included)
  // goes through the opened files, closed when the load ends. One pass over each file hashes it,
  // scans its encoding and splits its records, for every build below.
  const opened = await openDrop(await listDrop(opts.inputs, { enqueued: opts.enqueued ?? false }));
  try {
    const drop = await readOpened(opened, opts.month);
    if (opts.expectedDropId !== undefined) {
      if (drop.id !== opts.expectedDropId) throw new AppError(ErrorCodes.BAD_DROP, 'the drop\'s files changed after it was enqueued; enqueue it again');
      const loaded = await alreadyLoaded(site, drop, opts);
      if (loaded) return loaded;
    } else {
      await site.lock.using(() => adoptWholeCopies(site, opts.settings.memoryLimit));
    }
    for (let build = 1; build <= MAX_REBUILDS; build++) {
      const result = await buildAndPublish(opts, site, drop, opened.files, progress);
      if (result) return result;
      progress({ phase: 'stage', percent: 0 }); // the base changed while building: build again from the new one
    }
  } finally {
    await opened.close();
  }
  // Transient (other loads kept publishing first): a queued load is retried with backoff.
  throw new Error(`the published version changed during each of ${MAX_REBUILDS} builds; will retry`);
}

/** What the publish step did: published the build, or found this drop published by another attempt. */
type Published = { readonly kind: 'published'; readonly file: string; readonly retention: RetentionPlan; readonly removedDemo: readonly string[] } | { readonly kind: 'twin'; readonly twin: AlreadyLoaded }
  | { readonly kind: 'held'; readonly file: string };

/** One build on the current pointer, published if the pointer still names its base; null if not. */
async function buildAndPublish(opts: LoadOptions, site: VersionSite, drop: ReadDrop, sources: readonly OpenedFile[], progress: (p: LoadProgress) => void): Promise<LoadResult | null> {
  const served = await site.pointer.read();
  // A real drop replacing the demo builds on nothing: the demo's weeks are not its history.
  const replacesDemo = await demoBase(site, served, { demo: opts.demo === true, replaceDemo: opts.replaceDemo === true });
  const baseLabel = replacesDemo ? null : served;
  const base = baseLabel ? await readBase(site, baseLabel, opts.settings.memoryLimit) : null;
  const builtAt = (opts.now ?? (() => new Date()))();
  // Labels are unique among every stored file (an expired version's file may still be kept) and increasing.
  const lastEpoch = (await site.store.files()).reduce((max, v) => Math.max(max, v.builtAtEpoch), 0);
  const epoch = Math.max(Math.floor(builtAt.getTime() / 1000), lastEpoch + 1);
  const temp = buildTempPath(site.cache.dir);
  try {
    const { label, report, manifest, lookup, profile } = await buildVersion({
      targetFile: temp, month: opts.month, builtAt, drop, sources, onProgress: progress, base, labelFor: (month) => makeLabel(epoch, month),
      // Against the base: the publish below happens only while the pointer still names it.
      checkReleaseMonth: opts.allowOlder ? undefined : (month, source) => assertReleaseOrder(month, source, baseLabel),
    }, opts.settings);
    progress({ phase: 'verify', percent: 90 });
    await verifyBuiltFile(temp, label, opts.settings.memoryLimit);
    const sha256 = await fileSha256(temp);
    const breaches = opts.guards ? checkGuards(base?.profile ?? null, profile, label, opts.guards) : [];
    const held: HeldState | null = breaches.length ? { at: builtAt.toISOString(), compared_with: baseLabel, reasons: breaches } : null;
    const record: VersionRecord = {
      sha256, bytes: (await stat(temp)).size, lookup: { bytes: lookup.bytes, sha256: lookup.sha256, headSha256: lookup.headSha256 },
      dropId: drop.id, base: baseLabel, files: manifest.files, info: await readVersionInfo(temp, opts.settings.memoryLimit), profile,
      ...(held ? { held } : {}), ...(opts.demo ? { demo: true as const } : {}),
    };
    progress({ phase: 'publish', percent: 95 });
    const published = await site.lock.using(async (): Promise<Published | null> => {
      // Another attempt of the same queued job (its worker's lock lapsed and a second worker took
      // it) may have published this drop meanwhile: publishing it twice would make two versions of one drop.
      const twin = opts.expectedDropId === undefined ? null : await findLoaded(site, drop.id);
      if (twin) return { kind: 'twin', twin };
      if ((await site.pointer.read()) !== served) return null;
      if ((await site.store.files()).some((f) => f.label === label)) return null; // a concurrent load took this label
      await site.store.putFile(label, temp);
      await site.store.putFile(label, lookup.file, 'lookup');
      // The build becomes this machine's copy, with its proof, before any web process can be
      // told of it (on one machine the stored file is that copy: its build name goes, which
      // changes the file's identity, so the proof is taken after).
      const file = await site.cache.adopt(label, temp, sha256);
      await site.cache.adopt(label, lookup.file, lookup.sha256, 'lookup');
      await site.store.putRecord(label, record);
      // Held: a version, listed with its reasons, that no process serves until an operator publishes it.
      if (held) return { kind: 'held', file };
      await site.stage?.(label);
      // Moved after the check (cannot happen under the lock unless a holder stalled past its lease): not published.
      if (!(await site.pointer.swap(served, label))) {
        await site.store.removeFile(label);
        return null;
      }
      const removedDemo = replacesDemo ? await removeDemoVersions(site) : [];
      return { kind: 'published', file, removedDemo, retention: await retainAfter(site, opts.retain, served) };
    });
    if (published === null) return null;
    if (published.kind === 'twin') return reportLoaded(site, drop, published.twin, opts);
    await site.cache.prune([...filesOf(manifest), ...(base ? filesOf(base.manifest) : [])], site.cacheGraceMs);
    progress({ phase: 'done', percent: 100 });
    if (published.kind === 'held') {
      return { label, file: published.file, report, dropId: drop.id, alreadyLoaded: false, current: served, removedVersions: [], removedFiles: [], held: held!.reasons, removedDemo: [] };
    }
    const { file, retention, removedDemo } = published;
    return { label, file, report, dropId: drop.id, alreadyLoaded: false, current: label, removedVersions: retention.expire, removedFiles: retention.deleteFiles, held: null, removedDemo };
  } catch (err) {
    throw resourceError(err, opts.settings) ?? err;
  } finally {
    await removeBuildFiles(temp);
  }
}
