/** Test helper: claims every read it can from the back of the ReadClaims it is given, and posts the reads it got. */
import { parentPort, workerData } from 'node:worker_threads';
import { ReadClaims } from '../../api/lookup/read-claims.ts';

const claims = new ReadClaims((workerData as { buffer: SharedArrayBuffer }).buffer);
const got: number[] = [];
for (let read = claims.fromBack(); read >= 0; read = claims.fromBack()) got.push(read);
parentPort!.postMessage(got);
