/**
 * Windows-1252 for tests: Node decodes it (TextDecoder) but has no encoder, so the byte of each
 * character is taken from the decoder's own table.
 */
const DECODED = new TextDecoder('windows-1252').decode(Uint8Array.from({ length: 256 }, (_, b) => b));
const BYTE_OF = new Map([...DECODED].map((ch, b) => [ch, b]));

/** The 218 printable characters of Windows-1252: ASCII's and the 123 of 0x80-0xFF that are characters (the decoder makes the others, 0x81 0x8D 0x8F 0x90 0x9D, C1 controls). */
export const WINDOWS_1252_PRINTABLE: readonly string[] = [...DECODED].filter((ch) => !/\p{Cc}/u.test(ch));

/** The Windows-1252 bytes of `text`. @throws Error on a character Windows-1252 has not. */
export function windows1252(text: string): Buffer {
  return Buffer.from([...text].map((ch) => {
    const b = BYTE_OF.get(ch);
    if (b === undefined) throw new Error(`not a Windows-1252 character: U+${ch.codePointAt(0)!.toString(16)}`);
    return b;
  }));
}
