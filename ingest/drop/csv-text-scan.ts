import { AppError } from '../../shared/errors.ts';
import { CSV_LIMITS, parseCsvHeader, type CsvHeader } from './csv-header.ts';
import { RecordScan, type CsvRecords } from './csv-records.ts';

/** What one pass over a CSV file's (UTF-8, inflated) text finds: its header and its records. */
export interface CsvText {
  /**
   * The header line's dialect and names, or the refusal it earned: kept, not thrown, so that the
   * drop's files are refused in the order they are inspected (ingest/drop/drop-files.ts).
   */
  readonly header: CsvHeader | AppError;
  /** Its records as DuckDB splits them with the header's dialect; null when the header is refused. */
  readonly records: CsvRecords | null;
}

/**
 * Reads a CSV file's header and splits it into records (RecordScan) chunk by chunk, in the pass
 * that also hashes the file and scans its encoding (ingest/drop/file-facts.ts), or in the one
 * converting it to UTF-8 (ingest/drop/convert-text.ts): the text is read once for all three.
 * Holds the file's first CSV_LIMITS.maxHeaderBytes + 1 bytes until the header is read; the
 * records are split from the first byte once the dialect is known.
 */
export class CsvTextScan {
  private head: Buffer[] | null = [];
  private headBytes = 0;
  private header: CsvHeader | AppError | null = null;
  private records: RecordScan | null = null;
  /** The file's name, for the header's refusals. */
  private readonly name: string;

  constructor(name: string) {
    this.name = name;
  }

  update(chunk: Buffer): void {
    if (this.records) {
      this.records.feed(chunk);
      return;
    }
    if (!this.head) return; // the header was refused: nothing more to find
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes > CSV_LIMITS.maxHeaderBytes) this.readHeader(false);
  }

  result(): CsvText {
    if (this.head) this.readHeader(true);
    return { header: this.header!, records: this.records?.finish() ?? null };
  }

  /** Reads the header from the bytes held (as many as a header may take, or the whole file), then starts the records with them. */
  private readHeader(atEnd: boolean): void {
    const held = Buffer.concat(this.head!);
    this.head = null;
    try {
      this.header = parseCsvHeader(new TextDecoder('utf-8').decode(held.subarray(0, CSV_LIMITS.maxHeaderBytes + 1)), atEnd, this.name);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      this.header = err;
      return;
    }
    this.records = new RecordScan(this.header.dialect);
    this.records.feed(held);
  }
}
