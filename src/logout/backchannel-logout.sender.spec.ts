import { claimLeaseMs } from './backchannel-logout.sender.js';

describe(claimLeaseMs.name, () => {
  it.each([100, 5_000, 30_000, 60_000])('BACKCHANNEL_LOGOUT_TIMEOUT_MS=%i: the lease outlasts one send by at least 30 s, and is never under a minute', (timeoutMs) => {
    expect(claimLeaseMs(timeoutMs)).toBeGreaterThanOrEqual(timeoutMs + 30_000);
    expect(claimLeaseMs(timeoutMs)).toBeGreaterThanOrEqual(60_000);
  });

  it('keeps the one-minute lease for the default timeout (5 s)', () => {
    expect(claimLeaseMs(5_000)).toBe(60_000);
  });
});
