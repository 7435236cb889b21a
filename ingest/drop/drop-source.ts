/** A drop file as read: its path as listed (its name, its `.gz`, for messages), the path that reads it, and its size. */
export interface DropSource {
  readonly path: string;
  readonly readPath: string;
  /** Its size in bytes when opened. */
  readonly bytes: number;
}
