// The peer: PostGraphile 5 configured for production as its docs advise (Amber preset, no
// GraphiQL, no watch mode, no explain), serving the bench schema, where batch look-up is a SQL
// function (its fastest idiomatic form). Started by bench/peer-postgraphile.ts.
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';

const port = Number(process.env.PORT ?? 5678);
const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL, schemas: ['bench'], poolConfig: { max: 16 } })],
  grafserv: { port, graphiql: false, watch: false, graphqlPath: '/graphql' },
  grafast: { explain: false },
};
const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
serv.addTo(server).then(() => server.listen(port, '127.0.0.1', () => console.log(`peer listening on ${port}`)));
process.once('SIGTERM', () => server.close(() => pgl.release().then(() => process.exit(0))));
