/** The bare Fastify baseline: scenario a only, a GET answering a small JSON without any work. */
import { startServer } from '../lib/processes.mjs';

export default {
  name: 'baseline',
  async start({ port, cpu, logFile }) {
    const baseUrl = `http://127.0.0.1:${port}`;
    const server = await startServer({
      name: 'baseline',
      command: process.execPath,
      args: ['bench/servers/baseline-server.mjs'],
      env: { PORT: String(port), NODE_ENV: 'production' },
      cpu,
      readyUrl: `${baseUrl}/item`,
      logFile,
    });
    return { ...server, baseUrl };
  },
  async prepare() {
    return {};
  },
  scenarios: {
    a: { kind: 'fixed', request: () => ({ method: 'GET', path: '/item' }) },
  },
};
