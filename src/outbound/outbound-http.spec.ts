import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress, OutboundAddressRefused, postForm } from './outbound-http.js';

describe('outbound requests (SSRF protection)', () => {
  describe(isPublicAddress.name, () => {
    it.each([
      ['127.0.0.1', false],
      ['10.1.2.3', false],
      ['172.16.0.1', false],
      ['192.168.1.1', false],
      ['169.254.169.254', false],
      ['100.64.0.1', false],
      ['0.0.0.0', false],
      ['::1', false],
      ['fe80::1', false],
      ['fd00::1', false],
      ['::ffff:127.0.0.1', false],
      ['::ffff:10.0.0.1', false],
      ['::ffff:169.254.169.254', false],
      // IPv4-compatible (::/96, deprecated by RFC 4291 §2.5.5.1): unroutable here, routed as the IPv4 address by some stacks; refused whatever it embeds.
      ['::127.0.0.1', false],
      ['::7f00:1', false],
      ['::10.0.0.1', false],
      ['::169.254.169.254', false],
      ['::93.184.215.14', false],
      // IPv4-translated (RFC 6145), NAT64 (RFC 6052, RFC 8215), 6to4 (RFC 3056) and Teredo (RFC 4380): refused whatever they embed.
      ['::ffff:0:127.0.0.1', false],
      ['64:ff9b::127.0.0.1', false],
      ['64:ff9b::10.0.0.1', false],
      ['64:ff9b::93.184.215.14', false],
      ['64:ff9b:1::a00:1', false],
      ['2002:7f00:1::1', false],
      ['2002:c0a8:101::1', false],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false],
      // Outside 2000::/3, IANA's global unicast space: reserved, not public.
      ['4000::1', false],
      ['224.0.0.1', false],
      ['not an address', false],
      ['93.184.215.14', true],
      ['2606:4700::6810:84e5', true],
      ['::ffff:93.184.215.14', true],
    ])('%s is public: %s', (address, expected) => {
      expect(isPublicAddress(address)).toBe(expected);
    });
  });

  describe(postForm.name, () => {
    let server: Server;
    let port: number;
    const received: string[] = [];

    beforeAll(async () => {
      server = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          received.push(body);
          response.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('posts the form and resolves with the status when private networks are allowed', async () => {
      await expect(postForm(`http://127.0.0.1:${port}/bc`, { logout_token: 'x.y.z' }, { timeoutMs: 2000, allowPrivateNetworks: true })).resolves.toBe(204);
      expect(received.at(-1)).toBe('logout_token=x.y.z');
    });

    it.each([
      ['a loopback address', () => `http://127.0.0.1:${port}/bc`],
      ['a name that resolves to loopback', () => `http://localhost:${port}/bc`],
      ['an IPv4-mapped loopback address', () => `http://[::ffff:127.0.0.1]:${port}/bc`],
      ['an IPv4-compatible loopback address', () => `http://[::127.0.0.1]:${port}/bc`],
    ])('refuses %s before connecting, by default', async (_name, url) => {
      const count = received.length;
      await expect(postForm(url(), { logout_token: 'x' }, { timeoutMs: 2000, allowPrivateNetworks: false })).rejects.toBeInstanceOf(OutboundAddressRefused);
      expect(received.length).toBe(count);
    });

    it('refuses schemes other than http and https', async () => {
      await expect(postForm('file:///etc/passwd', {}, { timeoutMs: 2000, allowPrivateNetworks: true })).rejects.toThrow(/unsupported scheme/);
    });

    it('gives up on a receiver that does not answer in time', async () => {
      const silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      await expect(postForm(url, {}, { timeoutMs: 200, allowPrivateNetworks: true })).rejects.toThrow(/no answer within 200 ms/);
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
  });
});
