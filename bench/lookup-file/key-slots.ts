/**
 * An open-addressing hash table from a Placekey to its position in a lookup file's key list.
 * The keys stay in one buffer of fixed-width ASCII slots (zero-padded) as the file holds them,
 * and the table is one Int32Array of positions: about 20 + 8 bytes per key, off the JavaScript
 * heap, where a `Map` of strings took several times that and seconds to fill at 5M keys.
 */
export class KeySlots {
  readonly #keys: Buffer;
  readonly #width: number;
  readonly #mask: number;
  /** Position + 1 of the key hashed to each slot (0: empty), linear probing. */
  readonly #slots: Int32Array;

  /** `keys` holds `count` keys of at most `width` ASCII bytes each, zero-padded. */
  constructor(keys: Buffer, width: number, count: number) {
    if (keys.length !== width * count) throw new Error(`key list is ${keys.length} bytes, expected ${count} x ${width}`);
    this.#keys = keys;
    this.#width = width;
    let size = 2;
    while (size < count * 2) size *= 2; // at most half full: probe runs stay short
    this.#mask = size - 1;
    this.#slots = new Int32Array(size);
    for (let i = 0; i < count; i++) {
      let slot = hashBytes(keys, i * width, width) & this.#mask;
      while (this.#slots[slot] !== 0) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = i + 1;
    }
  }

  /** The key's position in the list, or -1 when the list does not hold it. */
  find(key: string): number {
    if (key.length > this.#width) return -1;
    let slot = hashString(key) & this.#mask;
    for (;;) {
      const entry = this.#slots[slot]!;
      if (entry === 0) return -1;
      if (this.#holds(entry - 1, key)) return entry - 1;
      slot = (slot + 1) & this.#mask;
    }
  }

  /** The key at a position of the list. */
  keyAt(position: number): string {
    const slot = this.#keys.subarray(position * this.#width, (position + 1) * this.#width);
    const end = slot.indexOf(0); // a key of the full width has no padding
    return slot.toString('latin1', 0, end < 0 ? slot.length : end);
  }

  #holds(position: number, key: string): boolean {
    const base = position * this.#width;
    for (let j = 0; j < this.#width; j++) {
      const byte = this.#keys[base + j]!;
      if (j < key.length ? byte !== key.charCodeAt(j) : byte !== 0) return false;
    }
    return true;
  }
}

/** FNV-1a over a string's UTF-16 code units; equals hashBytes for ASCII. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** FNV-1a over a zero-padded slot's bytes, stopping at the padding. */
function hashBytes(buf: Buffer, start: number, width: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < start + width; i++) {
    const byte = buf[i]!;
    if (byte === 0) break;
    h = Math.imul(h ^ byte, 0x01000193);
  }
  return h >>> 0;
}
