import { Queue } from 'bullmq';
import { redisConnection } from '../../shared/redis-connection.ts';

/** Deletes a test's own BullMQ queue (its jobs and keys) from the local Redis, so runs leave nothing behind. */
export async function removeQueue(name: string): Promise<void> {
  const q = new Queue(name, { connection: redisConnection('redis://127.0.0.1:6379') });
  try {
    await q.obliterate({ force: true });
  } finally {
    await q.close();
  }
}
