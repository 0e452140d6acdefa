import { withoutCredentials } from './without-credentials.js';

describe(withoutCredentials.name, () => {
  it.each([
    ['Cannot connect to postgres://latchkey:s3cret@db.internal:5432/latchkey', 'Cannot connect to postgres://latchkey:[redacted]@db.internal:5432/latchkey'],
    ['redis://:hunter2@cache:6379 refused', 'redis://:[redacted]@cache:6379 refused'],
    ['rediss://default:p%40ss@cache refused; postgresql://u:p@h/db too', 'rediss://default:[redacted]@cache refused; postgresql://u:[redacted]@h/db too'],
  ])('hides the password in %s', (detail, expected) => {
    expect(withoutCredentials({ id: 'database', status: 'fail', detail, fix: detail })).toEqual({ id: 'database', status: 'fail', detail: expected, fix: expected });
  });

  it('leaves URLs without a password, and e-mail addresses, as they are', () => {
    const detail = 'https://idp.example.com/.well-known/openid-configuration answered 404; mail to ops@example.com; postgres://latchkey@db/x';
    expect(withoutCredentials({ id: 'idp:x', status: 'ok', detail })).toEqual({ id: 'idp:x', status: 'ok', detail });
  });
});
