import { DEVICE_DESCRIPTION_MAX, describeDevice, UNKNOWN_DEVICE } from './device-description.js';

describe(describeDevice.name, () => {
  it.each([
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox on Windows'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox on Linux'],
    ['Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0', 'Firefox on Android'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/125.0 Mobile/15E148 Safari/605.1.15', 'Firefox on iPhone'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'Chrome on Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'Chrome on macOS'],
    ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36', 'Chrome on Android'],
    ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'Chrome on ChromeOS'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1', 'Chrome on iPhone'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36', 'Chrome on Linux'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'Safari on iPhone'],
    ['Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'Safari on iPad'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'Safari on macOS'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.56', 'Edge on Windows'],
    ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 EdgA/126.0.0.0', 'Edge on Android'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0', 'Opera on Windows'],
    ['Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36', 'Samsung Internet on Android'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Vivaldi/6.7', 'Vivaldi on Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko', 'Internet Explorer on Windows'],
    ['Mozilla/5.0 (X11; Linux x86_64) SomeNewBrowser/1.0', 'Unknown browser on Linux'],
    ['Mozilla/5.0', 'Unknown browser'],
  ])('%s is %j', (header, description) => {
    expect(describeDevice(header)).toBe(description);
  });

  it.each([
    ['curl/8.5.0', 'curl'],
    ['Wget/1.21.4', 'Wget'],
    ['python-requests/2.32.3', 'python-requests'],
    ['Go-http-client/2.0', 'Go-http-client'],
    ['okhttp/4.12.0', 'okhttp'],
    ['node', 'node'],
    ['MyCompanyApp/3.1 (build 1234; serial ABCDEF)', 'MyCompanyApp'],
  ])('a tool, %s, is named without version or comment: %j', (header, description) => {
    expect(describeDevice(header)).toBe(description);
  });

  it.each([
    [undefined, 'no header'],
    ['', 'an empty one'],
    ['   \t ', 'blanks'],
    ['(compatible)', 'no product name'],
    ['<script>alert(1)</script>', 'markup'],
    ['"quoted"/1.0', 'a quote first'],
  ])('%j (%s) is an unknown device', (header, _why) => {
    expect(describeDevice(header)).toBe(UNKNOWN_DEVICE);
  });

  it('keeps a tool name to 40 characters, and never grows with an absurdly long header', () => {
    expect(describeDevice(`${'a'.repeat(10_000)}/1.0`)).toBe('a'.repeat(40));
    expect(describeDevice(`Mozilla/5.0 (Windows NT 10.0) ${'x'.repeat(100_000)} Firefox/128.0`)).toBe('Unknown browser on Windows');
    expect(describeDevice('Mozilla/5.0 (Windows NT 10.0) Firefox/128.0' + ' '.repeat(100_000))).toBe('Firefox on Windows');
  });

  it('lets no control character, markup or quote through: the description is safe to store and to render', () => {
    const hostile = [
      'Mozilla/5.0 (Windows NT 10.0) <script>alert("x")</script> Firefox/128.0',
      'Mozilla/5.0 <img src=x onerror=alert(1)>',
      'curl\u0000/8.5.0',
      'evil\r\nSet-Cookie: a=b',
      'tool\u001b[31m/1.0',
      'app\u0085\u2028name/1.0',
      "it's/1.0 & <b>bold</b>",
      '\u202eesreveR/1.0',
      'x'.repeat(1_000_000),
    ];
    for (const header of hostile) {
      const description = describeDevice(header);
      expect(description).toMatch(/^[A-Za-z0-9._ -]+$/);
      expect(description.length).toBeLessThanOrEqual(DEVICE_DESCRIPTION_MAX);
    }
    expect(describeDevice('curl\u0000/8.5.0')).toBe('curl');
    expect(describeDevice('evil\r\nSet-Cookie: a=b')).toBe('evil');
    expect(describeDevice('Mozilla/5.0 (Windows NT 10.0) <script>alert("x")</script> Firefox/128.0')).toBe('Firefox on Windows');
  });

  it('names no version: a browser update is not a new device', () => {
    expect(describeDevice('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:129.0) Gecko/20100101 Firefox/129.0')).toBe(describeDevice('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0'));
  });
});
