/**
 * Load for the whole failover run: workers that each, in a loop, get a token (client_credentials)
 * and write a note with a person's token, alternating between the instances; and a probe of every
 * instance's /health/ready. Every answer is recorded with its time, and every token and item the
 * instances acknowledged, so the test can tell what clients saw when, and check that nothing
 * acknowledged was lost.
 *
 * Requests go to the instances' own ports as nginx would pass them (test/cluster/support/target.ts):
 * plain http from loopback, which TRUST_PROXY trusts, with nginx's X-Forwarded-* headers. A proxy in
 * front would only pass the instances' answers on; the failover happens behind the instances.
 */
import type { Instance } from '../../cluster/support/instance.js';
import { send, type RequestOptions } from '../../cluster/support/http.js';
import { basicAuth } from '../../helpers/oauth-flow.js';

export interface Answer {
  op: 'token' | 'create';
  instance: string;
  /** HTTP status; 0 when no answer came (connection error or a 30 s timeout). */
  status: number;
  /** When the request was sent and when its answer came (ms since the epoch). */
  sentAt: number;
  at: number;
  /** The error code of a failed answer (e.g. temporarily_unavailable), or the connection error. */
  error?: string;
}

export interface Probe {
  instance: string;
  status: number;
  at: number;
}

export interface LoadSetup {
  instances: Instance[];
  issuer: string;
  service: { clientId: string; clientSecret: string };
  userToken: string;
  workers: number;
  /** A client's pause after a failed answer, before its next request. */
  backoffMs: number;
}

export class FailoverLoad {
  readonly answers: Answer[] = [];
  readonly probes: Probe[] = [];
  /** Access tokens answered with 200, and ids of items answered with 201. */
  readonly tokens: string[] = [];
  readonly items: string[] = [];
  private stopping = false;
  private running?: Promise<unknown>;

  constructor(readonly setup: LoadSetup) {}

  start(): void {
    const workers = Array.from({ length: this.setup.workers }, (_, id) => this.worker(id));
    this.running = Promise.all([...workers, ...this.setup.instances.map((i) => this.probe(i))]);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private async worker(id: number): Promise<void> {
    const { instances, service, userToken, backoffMs } = this.setup;
    for (let n = 0; !this.stopping; n++) {
      const instance = instances[(id + n) % instances.length];
      const token = await this.call('token', instance, 'POST', '/token', {
        form: { grant_type: 'client_credentials', scope: 'notes:read' },
        headers: { authorization: basicAuth(service.clientId, service.clientSecret) },
      });
      if (token.status === 200) this.tokens.push(String(token.body.access_token));
      const created = await this.call('create', instance, 'POST', '/api/v1/notes', {
        json: { title: `failover ${id}.${n}` },
        headers: { authorization: `Bearer ${userToken}` },
      });
      if (created.status === 201) this.items.push(String(created.body.id));
      if (token.status !== 200 || created.status !== 201) await sleep(backoffMs);
    }
  }

  private async call(op: Answer['op'], instance: Instance, method: string, path: string, options: RequestOptions) {
    const sentAt = Date.now();
    const reply = await sendAsProxied(instance, this.setup.issuer, method, path, options);
    const ok = reply.status >= 200 && reply.status < 300;
    this.answers.push({ op, instance: instance.name, status: reply.status, sentAt, at: Date.now(), ...(ok ? {} : { error: reply.error ?? String(reply.body.error) }) });
    return reply;
  }

  private async probe(instance: Instance): Promise<void> {
    while (!this.stopping) {
      this.probes.push({ instance: instance.name, status: await instance.readiness(), at: Date.now() });
      await sleep(100);
    }
  }
}

/** One request to `instance`'s own port as nginx passes it on (deploy/nginx-proxy.conf's headers). */
export function sendAsProxied(instance: Instance, issuer: string, method: string, path: string, options: RequestOptions): ReturnType<typeof send> {
  const host = new URL(issuer).host;
  const forwarded = { host, 'x-forwarded-host': host, 'x-forwarded-proto': 'https', 'x-forwarded-for': '127.0.0.1' };
  return send(`http://${instance.address}`, method, path, { ...options, headers: { ...forwarded, ...options.headers } });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
