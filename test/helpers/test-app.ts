import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { createApp, type CreateAppOptions } from '../../src/app.setup.js';
import type { NewClient } from '../../src/clients/client-information.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Clock } from '../../src/common/clock.js';
import { UsersService } from '../../src/users/users.service.js';
import { createTestDatabase, dropTestDatabase } from './test-database.js';

export interface RegisteredClient {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
}

/** A client as createClient() registered it: with its token_endpoint_auth_method when the test chose one (else Basic, or none when public). */
export type RegisteredClientWithMethod = RegisteredClient & { tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none' };

export interface TestUser {
  username: string;
  password: string;
}

/**
 * The real application, booted through the same createApp() as main.ts, listening on a real
 * port on loopback, on this test file's own database.
 */
export class TestApp {
  private constructor(
    readonly app: NestFastifyApplication,
    readonly baseUrl: string,
  ) {}

  static async start(env: Record<string, string> = {}, options: CreateAppOptions = {}): Promise<TestApp> {
    Object.assign(process.env, env);
    await createTestDatabase();
    const app = await createApp({ level: 'error', ...options });
    await app.listen(0, '127.0.0.1');
    await app.getHttpAdapter().getInstance().ready();
    const address = app.getHttpServer().address() as { port: number };
    return new TestApp(app, `http://127.0.0.1:${address.port}`);
  }

  async stop(): Promise<void> {
    await this.app.close();
    await dropTestDatabase();
  }

  url(path: string): string {
    return this.baseUrl + path;
  }

  get dataSource(): DataSource {
    return this.app.get<DataSource>(getDataSourceToken());
  }

  get clock(): Clock {
    return this.app.get(Clock);
  }

  async createUser(username = `user_${Math.random().toString(36).slice(2, 10)}`, password = 'correct horse battery staple'): Promise<TestUser> {
    await this.app.get(UsersService).create(username, password);
    return { username, password };
  }

  async createClient(options: Partial<NewClient> = {}): Promise<RegisteredClientWithMethod> {
    const redirectUris = options.redirectUris ?? ['http://localhost:8080/callback'];
    const { client, secret } = await this.app.get(ClientsService).create({
      name: options.name ?? 'Test Client',
      redirectUris,
      scope: options.scope ?? 'notes:read notes:write',
      isPublic: options.isPublic,
      grantTypes: options.grantTypes,
      responseTypes: options.responseTypes,
      tokenEndpointAuthMethod: options.tokenEndpointAuthMethod,
      accessTokenType: options.accessTokenType,
      openId: options.openId,
    });
    return { clientId: client.id, clientSecret: secret, redirectUri: redirectUris[0], tokenEndpointAuthMethod: options.tokenEndpointAuthMethod };
  }
}
