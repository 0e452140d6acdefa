import type { FastifyRequest } from 'fastify';
// The package's index loads its guard, which `require`s the ESM-only @nestjs/common: under Jest that
// fails (rate-limit.module.ts). ip.js needs nothing but node:net.
import { normalizeIp } from '@nestjs/throttler/dist/ip.js';

/**
 * The address a limit counts by: request.ip, which is the client's own once Fastify trusts the
 * load balancers (TRUST_PROXY); an IPv6 address by its /64, which one host usually holds whole.
 */
export function clientAddress(request: FastifyRequest): string {
  return normalizeIp(request.ip);
}
