/** A drop file as read: its path as listed (its name, its `.gz`, for messages) and the path that reads it. */
export interface DropSource {
  readonly path: string;
  readonly readPath: string;
}
