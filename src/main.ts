import 'reflect-metadata';
import { createApp } from './app.setup.js';
import { appConfig } from './config/app.config.js';

async function main(): Promise<void> {
  const app = await createApp();
  const { port, host, issuer } = app.get(appConfig.KEY);
  await app.listen(port, host);
  console.log(`Latchkey is listening on ${host}:${port} (issuer ${issuer})`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
