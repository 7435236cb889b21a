import S3rver from 's3rver';

/**
 * An S3-protocol server as its own process (argv: storage folder, bucket, port: 0 or absent for a free one), as a real object
 * store would be: in the test's process it would compete with the load generator for one event
 * loop. Prints `{"port":N}` once listening; stops on SIGTERM.
 */
const [dir, bucket, port0] = process.argv.slice(2);
const server = new S3rver({ port: Number(port0 ?? 0), address: '127.0.0.1', silent: true, directory: dir!, configureBuckets: [{ name: bucket! }] });
const { port } = await server.run();
process.stdout.write(JSON.stringify({ port }) + '\n');
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
