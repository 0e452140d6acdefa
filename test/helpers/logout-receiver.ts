/**
 * A relying party's back-channel logout endpoint (Back-Channel Logout 1.0 §2.5) on loopback: an
 * http server that records every logout_token POSTed to it and answers 200, or the statuses
 * planned for a session. Servers reach it only with OUTBOUND_ALLOW_PRIVATE_NETWORKS=true
 * (outgoing requests refuse loopback otherwise). Used by the e2e and the cluster tests.
 */
import { decodeJwt } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedLogout {
  token: string;
  /** The token's sid, or undefined when the body carried no decodable logout_token. */
  sid?: string;
  at: number;
}

export class LogoutReceiver {
  readonly received: ReceivedLogout[] = [];
  /** Statuses to answer, in turn, to the notifications of one session (by sid); 200 when none is planned. */
  readonly planned = new Map<string, number[]>();
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const token = new URLSearchParams(body).get('logout_token') ?? '';
        let sid: string | undefined;
        try {
          sid = decodeJwt(token).sid as string | undefined;
        } catch {
          // recorded without a sid: the test sees it among the notifications it did not expect
        }
        this.received.push({ token, sid, at: Date.now() });
        const status = token === '' ? 400 : ((sid !== undefined ? this.planned.get(sid)?.shift() : undefined) ?? 200);
        response.writeHead(status, { 'cache-control': 'no-store' }).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/backchannel`;
  }

  /** The logout tokens received for `sid`. */
  forSession(sid: string): string[] {
    return this.received.filter((r) => r.sid === sid).map((r) => r.token);
  }

  /** Waits (bounded) until every sid in `sids` has at least one logout token. */
  async waitFor(sids: string[], timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (sids.some((sid) => this.forSession(sid).length === 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /** Waits (bounded) for `count` logout tokens naming this session, and returns those received. */
  async tokensFor(sid: string, count = 1, timeoutMs = 10_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.forSession(sid).length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    return this.forSession(sid);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
