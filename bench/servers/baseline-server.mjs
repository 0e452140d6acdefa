// The ceiling: a bare Fastify route answering a small JSON, as cheap as a Node HTTP service gets.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const item = { id: '0192a4c4-7f3e-7a61-9b3d-4d1a9e2f6c10', title: 'A note', done: false, tags: ['bench'] };
app.get('/item', async () => item);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
