import { ago } from './console-instances.js';

describe('ago (the dashboard\'s "last seen")', () => {
  const now = new Date('2026-12-01T12:00:00Z');
  const before = (seconds: number) => new Date(now.getTime() - seconds * 1000);

  it.each([
    [0, 'just now'],
    [-5, 'just now'],
    [1, '1 s ago'],
    [12, '12 s ago'],
    [59, '59 s ago'],
    [60, '1 min ago'],
    [3599, '59 min ago'],
    [3600, '1 h ago'],
    [86_399, '23 h ago'],
    [2 * 86_400, '2 d ago'],
  ])('says %i s before as %s', (seconds, wording) => {
    expect(ago(before(seconds), now)).toBe(wording);
  });

  it('shows a dash for an instant it cannot read', () => {
    expect(ago(new Date('not a date'), now)).toBe('—');
  });
});
