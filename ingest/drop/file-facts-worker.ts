/**
 * A thread of the load's identity pass (ingest/drop/file-facts-thread.ts): reads one drop file
 * (fileFacts: hash, inflate, encoding, header, records) and posts what it found, or its refusal.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fileFacts } from './file-facts.ts';
import { toWire, type FactsJob, type FactsReply, type WireFacts } from './file-facts-thread.ts';

const job = workerData as FactsJob;
let reply: FactsReply;
try {
  const facts = await fileFacts(job.source, job.reading, job.gzip);
  const header = facts.csv?.header;
  reply = facts.csv && header && !('dialect' in header)
    ? { facts: { ...facts, csv: { header: null, records: facts.csv.records } }, refusedHeader: toWire(header) }
    : { facts: facts as WireFacts };
} catch (err) {
  reply = { error: toWire(err) };
}
parentPort!.postMessage(reply);
