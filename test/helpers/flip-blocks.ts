import { open } from 'node:fs/promises';

/** Overwrites 4 KiB at each offset with other bytes (each byte XOR 0x5a): a damaged disk block. */
export async function flipBlocks(file: string, offsets: readonly number[]): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    for (const at of offsets) {
      const block = Buffer.alloc(4096);
      await handle.read(block, 0, 4096, at);
      for (let i = 0; i < block.length; i++) block[i] = block[i]! ^ 0x5a;
      await handle.write(block, 0, 4096, at);
    }
  } finally {
    await handle.close();
  }
}
