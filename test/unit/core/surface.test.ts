/**
 * Service configuration (surface.ts): the direct and the gateway surface parsed from what an operator
 * typed, with the exact message and field for each mistake and never the key in a message; the endpoints
 * each surface builds; the gateway headers a kiosk authenticates itself with (names a gateway can route,
 * never HTTP's own; printable one-line values; never over cleartext to another computer); and what counts
 * as "this computer".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkGatewayHeaders,
  cleartextHeadersProblem,
  cleartextKeyProblem,
  describeTarget,
  endpointsFor,
  isLoopbackHost,
  parseServiceTarget,
  type ServiceTargetInput,
} from '../../../electron/core/surface.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { ServiceTarget } from '../../../electron/core/session-types.ts';

const KEY = 'sk_live_0123456789abcdef';

/** Asserts that `fn` throws an AvatarError `invalid_config` for `field` whose message matches `pattern`. */
function assertConfigError(fn: () => unknown, field: string, pattern: RegExp): AvatarError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof AvatarError, `expected an AvatarError, got ${String(caught)}`);
  assert.equal(caught.code, 'invalid_config');
  assert.deepEqual(caught.details, { field });
  assert.match(caught.message, pattern);
  return caught;
}

/** The AvatarError `fn` throws, as the code, message and field an operator would be shown. */
function failure(fn: () => unknown): { code: string; message: string; field: unknown } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof AvatarError, `expected an AvatarError, got ${String(error)}`);
    return { code: error.code, message: error.message, field: error.details?.field };
  }
  assert.fail('expected an error');
}

const headerNameError = (name: string) => ({
  code: 'invalid_config',
  message: `The gateway header name "${name}" is not allowed; use a custom header such as X-Device-Token.`,
  field: 'gatewayHeaders',
});
const headerValueError = (name: string) => ({
  code: 'invalid_config',
  message: `The gateway header "${name}" needs a value of printable characters on one line (at most 4096).`,
  field: 'gatewayHeaders',
});

function allUrls(target: ServiceTarget, liveId = 'live-1'): string[] {
  const e = endpointsFor(target);
  return [e.createSession, e.session(liveId), e.socket(liveId), e.cloneVoice, e.listVoices];
}

describe('parseServiceTarget', () => {
  describe('for the direct surface', () => {
    it('returns the normalised target with the key', () => {
      assert.deepEqual(parseServiceTarget({ surface: 'direct', baseUrl: 'https://avatar.example.test', apiKey: KEY }), {
        surface: 'direct',
        baseUrl: 'https://avatar.example.test',
        apiKey: KEY,
      });
    });
    it('defaults to direct when only baseUrl is given', () => {
      assert.equal(parseServiceTarget({ baseUrl: 'http://127.0.0.1:8080', apiKey: KEY }).surface, 'direct');
    });
    it('removes trailing slashes and keeps a path prefix', () => {
      assert.deepEqual(parseServiceTarget({ baseUrl: 'https://h.test/avatar///', apiKey: KEY }), {
        surface: 'direct',
        baseUrl: 'https://h.test/avatar',
        apiKey: KEY,
      });
      assert.equal((parseServiceTarget({ baseUrl: 'http://localhost:8080/', apiKey: KEY }) as { baseUrl: string }).baseUrl, 'http://localhost:8080');
    });
    it('refuses http:// to anything but this computer: the key would cross the network unencrypted', () => {
      for (const baseUrl of ['http://h.test', 'http://10.0.0.5:8080', 'http://192.168.1.20/avatar', 'http://[fe80::1]:80', 'http://127.0.0.1.nip.io']) {
        const err = assertConfigError(() => parseServiceTarget({ baseUrl, apiKey: KEY }), 'baseUrl', /^The service URL must start with https:\/\/ \(got http:\/\/.+\): with http:\/\/ the API key would cross the network unencrypted; http:\/\/ is only for this computer \(localhost, 127\.0\.0\.1, ::1\)\.$/);
        assert.ok(!err.message.includes(KEY));
      }
      for (const baseUrl of ['http://127.0.0.1:9', 'http://127.8.9.10', 'http://localhost', 'http://[::1]:8080', 'https://10.0.0.5']) {
        assert.equal(parseServiceTarget({ baseUrl, apiKey: KEY }).surface, 'direct', baseUrl);
      }
    });
    it('trims surrounding whitespace from the URL and the key', () => {
      assert.deepEqual(parseServiceTarget({ baseUrl: '  https://h.test  ', apiKey: `  ${KEY}\n` }), {
        surface: 'direct',
        baseUrl: 'https://h.test',
        apiKey: KEY,
      });
    });
    it('rejects a missing URL', () => {
      assertConfigError(() => parseServiceTarget({ surface: 'direct', apiKey: KEY }), 'baseUrl', /service URL \(baseUrl\) is not set/);
      assertConfigError(() => parseServiceTarget({ baseUrl: '   ', apiKey: KEY }), 'baseUrl', /not set/);
    });
    it('treats a blank URL as not set', () => {
      assert.deepEqual(failure(() => parseServiceTarget({ baseUrl: '   ', apiKey: 'k-123456' })), {
        code: 'invalid_config',
        message: 'The avatar service URL (baseUrl) is not set. Enter the address the service provider gave you.',
        field: 'baseUrl',
      });
    });
    it('rejects a missing or blank API key', () => {
      assertConfigError(() => parseServiceTarget({ baseUrl: 'https://h.test' }), 'apiKey', /API key is required/);
      assertConfigError(() => parseServiceTarget({ baseUrl: 'https://h.test', apiKey: '  ' }), 'apiKey', /API key is required/);
    });
    it('rejects a key with spaces, tabs or line breaks inside', () => {
      for (const apiKey of ['sk live', 'sk\tlive', 'sk\nlive', 'sk\u0000live']) {
        assertConfigError(() => parseServiceTarget({ baseUrl: 'https://h.test', apiKey }), 'apiKey', /spaces or line breaks/);
      }
    });
    it('rejects a URL ending in /live/v1 or /live/v1/lives (the paths are appended)', () => {
      for (const baseUrl of ['https://h.test/live/v1', 'https://h.test/live/v1/', 'https://h.test/live/v1/lives', 'https://h.test/LIVE/V1']) {
        assertConfigError(() => parseServiceTarget({ baseUrl, apiKey: KEY }), 'baseUrl', /without "\/live\/v1"/);
      }
    });
    it('rejects a URL that contains the key', () => {
      const err = assertConfigError(
        () => parseServiceTarget({ baseUrl: `https://h.test/${KEY}`, apiKey: KEY }),
        'baseUrl',
        /must not contain the API key/,
      );
      assert.ok(!err.message.includes(KEY));
    });
  });

  describe('for the gateway surface', () => {
    it('defaults to gateway when only gatewayUrl is given, with no key', () => {
      assert.deepEqual(parseServiceTarget({ gatewayUrl: 'https://gw.example.test/' }), { surface: 'gateway', gatewayUrl: 'https://gw.example.test' });
    });
    it('rejects a missing gateway URL', () => {
      assertConfigError(() => parseServiceTarget({ surface: 'gateway' }), 'gatewayUrl', /gateway URL \(gatewayUrl\) is not set/);
    });
    it('rejects an API key (the gateway adds the credential itself)', () => {
      const err = assertConfigError(
        () => parseServiceTarget({ surface: 'gateway', gatewayUrl: 'https://gw.test', apiKey: KEY }),
        'apiKey',
        /gateway surface takes no API key/,
      );
      assert.ok(!err.message.includes(KEY));
    });
    it('rejects a URL ending in /api', () => {
      assertConfigError(() => parseServiceTarget({ gatewayUrl: 'https://gw.test/api' }), 'gatewayUrl', /should not end in "\/api"/);
      assertConfigError(() => parseServiceTarget({ gatewayUrl: 'https://gw.test/api/' }), 'gatewayUrl', /should not end in "\/api"/);
    });
  });

  it('accepts paths that only contain /live/v1 or /api somewhere before their end', () => {
    assert.deepEqual(parseServiceTarget({ baseUrl: 'https://h.test/live/v1/tenant', apiKey: 'k-123456' }), {
      surface: 'direct',
      baseUrl: 'https://h.test/live/v1/tenant',
      apiKey: 'k-123456',
    });
    assert.deepEqual(parseServiceTarget({ gatewayUrl: 'https://gw.test/api/v2' }), { surface: 'gateway', gatewayUrl: 'https://gw.test/api/v2' });
  });

  describe('with gateway headers', () => {
    const headers = { 'X-Device-Token': 'dev-123' };

    it('keeps them on the target and sends them with every request', () => {
      const target = parseServiceTarget({ gatewayUrl: 'https://gw.test/', gatewayHeaders: headers });
      assert.deepEqual(target, { surface: 'gateway', gatewayUrl: 'https://gw.test', headers });
      assert.deepEqual(endpointsFor(target).headers(), headers);
    });
    it('leaves an empty set of headers out', () => {
      assert.deepEqual(parseServiceTarget({ gatewayUrl: 'https://gw.test', gatewayHeaders: {} }), { surface: 'gateway', gatewayUrl: 'https://gw.test' });
    });
    it('checks them', () => {
      assert.deepEqual(failure(() => parseServiceTarget({ gatewayUrl: 'https://gw.test', gatewayHeaders: { Host: 'x' } })), headerNameError('Host'));
    });
    it('refuses to send them over http:// to another computer, but allows this computer', () => {
      const input: ServiceTargetInput = { gatewayUrl: 'http://gw.example:8080', gatewayHeaders: headers };
      assert.deepEqual(failure(() => parseServiceTarget(input)), {
        code: 'invalid_config',
        message:
          'The gateway URL must start with https:// (got http://gw.example:8080) when gatewayHeaders are set: with http:// the device\'s token would cross the network unencrypted; http:// is only for this computer (localhost, 127.0.0.1, ::1).',
        field: 'gatewayUrl',
      });
      assert.deepEqual(parseServiceTarget({ gatewayUrl: 'http://127.0.0.1:8080', gatewayHeaders: headers }), {
        surface: 'gateway',
        gatewayUrl: 'http://127.0.0.1:8080',
        headers,
      });
      // Without headers there is nothing to protect: a plain http:// gateway is the integrator's choice.
      assert.deepEqual(parseServiceTarget({ gatewayUrl: 'http://gw.example' }), { surface: 'gateway', gatewayUrl: 'http://gw.example' });
    });
  });

  describe('when both URLs are given', () => {
    it('rejects them without an explicit surface', () => {
      assertConfigError(
        () => parseServiceTarget({ baseUrl: 'https://h.test', gatewayUrl: 'https://gw.test', apiKey: KEY }),
        'surface',
        /choose one surface/,
      );
    });
    it('uses the named surface', () => {
      assert.deepEqual(parseServiceTarget({ surface: 'gateway', baseUrl: 'https://h.test', gatewayUrl: 'https://gw.test' }), {
        surface: 'gateway',
        gatewayUrl: 'https://gw.test',
      });
    });
  });

  describe('URL checks (both surfaces)', () => {
    const cases: Array<[string, ServiceTargetInput, string]> = [
      ['direct', { apiKey: KEY }, 'baseUrl'],
      ['gateway', { surface: 'gateway' }, 'gatewayUrl'],
    ];
    for (const [name, extra, field] of cases) {
      const withUrl = (url: string): ServiceTargetInput => ({ ...extra, [field]: url });

      it(`${name}: rejects a non-http(s) scheme`, () => {
        for (const url of ['ftp://h.test', 'ws://h.test', 'wss://h.test', 'file:///etc/passwd', 'localhost:8080']) {
          assertConfigError(() => parseServiceTarget(withUrl(url)), field, /must start with http:\/\/ or https:\/\//);
        }
      });
      it(`${name}: rejects text that is not a URL`, () => {
        assertConfigError(() => parseServiceTarget(withUrl('not a url')), field, /not a valid address/);
      });
      it(`${name}: rejects a query string, even an empty one`, () => {
        assertConfigError(() => parseServiceTarget(withUrl('https://h.test/?a=1')), field, /query string/);
        assertConfigError(() => parseServiceTarget(withUrl('https://h.test/?')), field, /query string/);
      });
      it(`${name}: rejects a fragment, even an empty one`, () => {
        assertConfigError(() => parseServiceTarget(withUrl('https://h.test/#x')), field, /fragment/);
        assertConfigError(() => parseServiceTarget(withUrl('https://h.test/#')), field, /fragment/);
      });
      it(`${name}: rejects credentials in the URL without echoing them`, () => {
        const err = assertConfigError(() => parseServiceTarget(withUrl('https://user:hunter2pw@h.test')), field, /user name or password/);
        assert.ok(!err.message.includes('hunter2pw'));
        assertConfigError(() => parseServiceTarget(withUrl('https://user@h.test')), field, /user name or password/);
      });
      it(`${name}: does not echo a query string that carries a secret`, () => {
        const err = assertConfigError(() => parseServiceTarget(withUrl(`https://h.test/?key=${KEY}`)), field, /query string/);
        assert.ok(!err.message.includes(KEY));
      });
    }
  });

  it('names each surface in the "not a valid address" message', () => {
    assert.deepEqual(failure(() => parseServiceTarget({ baseUrl: 'not a url', apiKey: 'k-123456' })), {
      code: 'invalid_config',
      message: 'The service URL is not a valid address; it should look like https://host or http://host:port.',
      field: 'baseUrl',
    });
    assert.deepEqual(failure(() => parseServiceTarget({ gatewayUrl: 'not a url' })), {
      code: 'invalid_config',
      message: 'The gateway URL is not a valid address; it should look like https://host or http://host:port.',
      field: 'gatewayUrl',
    });
  });

  it('rejects an unknown surface', () => {
    assertConfigError(
      () => parseServiceTarget({ surface: 'sideways' as never, baseUrl: 'https://h.test', apiKey: KEY }),
      'surface',
      /Unknown service surface "sideways"/,
    );
  });
});

describe('checkGatewayHeaders', () => {
  it('returns valid headers unchanged, values of up to 4096 characters included', () => {
    const headers = { 'X-Device-Token': 'dev-123', X: 'y', "a!#$%&'*+.^_`|~9": 'v', 'X-Long': 'v'.repeat(4096) };
    assert.deepEqual(checkGatewayHeaders(headers), headers);
    assert.deepEqual(checkGatewayHeaders({}), {});
  });

  it('refuses every header name that belongs to HTTP itself, in any case', () => {
    const reserved = ['host', 'content-length', 'content-type', 'connection', 'transfer-encoding', 'upgrade', 'accept', 'cookie', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions'];
    for (const name of [...reserved, 'Host', 'Cookie', 'Sec-WebSocket-Key']) {
      assert.deepEqual(failure(() => checkGatewayHeaders({ [name]: 'v' })), headerNameError(name), name);
    }
  });

  it('refuses names that are not HTTP tokens, quoting at most 64 characters of them', () => {
    for (const name of ['X Device', 'X-Token bad', 'bad:name', '']) {
      assert.deepEqual(failure(() => checkGatewayHeaders({ [name]: 'v' })), headerNameError(name), JSON.stringify(name));
    }
    const long = `X-${'a'.repeat(63)}`;
    assert.deepEqual(failure(() => checkGatewayHeaders({ [long]: 'v' })), headerNameError(long.slice(0, 64)));
    const longest = `X-${'a'.repeat(62)}`;
    assert.deepEqual(checkGatewayHeaders({ [longest]: 'v' }), { [longest]: 'v' });
  });

  it('refuses a value that is empty, too long, multi-line, has control characters, or is not text', () => {
    const values: unknown[] = ['', 'v'.repeat(4097), 'a\r\nInjected: 1', 'tab\there', 'del\u007f', 42];
    for (const value of values) {
      assert.deepEqual(failure(() => checkGatewayHeaders({ 'X-Device-Token': value as string })), headerValueError('X-Device-Token'), JSON.stringify(value));
    }
  });
});

describe('cleartext checks', () => {
  it('have nothing to say about text that is not a URL (the URL checks do)', () => {
    assert.equal(cleartextKeyProblem('not a url'), null);
    assert.equal(cleartextHeadersProblem('not a url'), null);
  });
  it('allow https:// anywhere and http:// to this computer only', () => {
    for (const url of ['https://gw.example', 'http://localhost:1', 'http://[::1]:2', 'http://127.1.2.3']) {
      assert.equal(cleartextHeadersProblem(url), null, url);
    }
    assert.match(cleartextHeadersProblem('http://10.0.0.1') ?? '', /^must start with https:\/\/ \(got http:\/\/10\.0\.0\.1\) when gatewayHeaders are set/);
  });
});

describe('isLoopbackHost', () => {
  it('accepts this computer in its spellings, with surrounding spaces or IPv6 brackets', () => {
    for (const host of ['localhost', ' LocalHost ', '::1', '[::1]', '127.0.0.1', '127.255.0.9']) assert.equal(isLoopbackHost(host), true, host);
  });
  it('refuses hosts that only contain a loopback address or misplace the brackets', () => {
    for (const host of ['1127.0.0.1', 'x127.0.0.1', '127.0.0.1.example', '::[1]', '[::]1', 'localhost.example']) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });
});

describe('endpointsFor', () => {
  describe('on the direct surface (spec §4)', () => {
    const target = parseServiceTarget({ baseUrl: 'http://127.0.0.1:8080/', apiKey: KEY });
    const e = endpointsFor(target);

    it('builds exactly the direct paths', () => {
      assert.equal(e.createSession, 'http://127.0.0.1:8080/live/v1/lives');
      assert.equal(e.session('abc'), 'http://127.0.0.1:8080/live/v1/lives/abc');
      assert.equal(e.socket('abc'), 'ws://127.0.0.1:8080/live/ws/live/connect?live_id=abc');
      assert.equal(e.cloneVoice, 'http://127.0.0.1:8080/live/v1/voices/clone');
      assert.equal(e.listVoices, 'http://127.0.0.1:8080/live/v1/voices');
    });
    it('uses wss:// for an https:// service and keeps a path prefix', () => {
      const s = endpointsFor(parseServiceTarget({ baseUrl: 'https://h.test/prefix/', apiKey: KEY }));
      assert.equal(s.socket('abc'), 'wss://h.test/prefix/live/ws/live/connect?live_id=abc');
      assert.equal(s.createSession, 'https://h.test/prefix/live/v1/lives');
    });
    it('URL-encodes the session id in the path and in the query', () => {
      assert.equal(e.session('a/b?c#d e'), 'http://127.0.0.1:8080/live/v1/lives/a%2Fb%3Fc%23d%20e');
      assert.equal(e.socket('a&b=c'), 'ws://127.0.0.1:8080/live/ws/live/connect?live_id=a%26b%3Dc');
    });
    it('rejects an empty session id with invalid_request', () => {
      assert.throws(() => e.session(''), (err: unknown) => err instanceof AvatarError && err.code === 'invalid_request');
      assert.throws(() => e.socket(''), (err: unknown) => err instanceof AvatarError && err.code === 'invalid_request');
    });
    it('sends exactly {Authorization: "Token <key>"}, as a fresh object each call', () => {
      assert.deepEqual(e.headers(), { Authorization: `Token ${KEY}` });
      const first = e.headers();
      first.Authorization = 'tampered';
      assert.deepEqual(e.headers(), { Authorization: `Token ${KEY}` });
    });
    it('never puts the key in any URL', () => {
      for (const url of allUrls(target)) assert.ok(!url.includes(KEY), url);
    });
  });

  describe('on the gateway surface (spec §4, §5)', () => {
    const target = parseServiceTarget({ gatewayUrl: 'https://gw.example.test/avatar/' });
    const e = endpointsFor(target);

    it('builds exactly the gateway paths', () => {
      assert.equal(e.createSession, 'https://gw.example.test/avatar/api/lives');
      assert.equal(e.session('abc'), 'https://gw.example.test/avatar/api/lives/abc');
      assert.equal(e.socket('abc'), 'wss://gw.example.test/avatar/api/ws?live_id=abc');
      assert.equal(e.cloneVoice, 'https://gw.example.test/avatar/api/voices/clone');
      assert.equal(e.listVoices, 'https://gw.example.test/avatar/api/voices');
    });
    it('uses ws:// for an http:// gateway', () => {
      assert.equal(endpointsFor(parseServiceTarget({ gatewayUrl: 'http://127.0.0.1:9000' })).socket('x y'), 'ws://127.0.0.1:9000/api/ws?live_id=x%20y');
    });
    it('URL-encodes the session id', () => {
      assert.equal(e.session('../admin'), 'https://gw.example.test/avatar/api/lives/..%2Fadmin');
    });
    it('sends no headers at all', () => {
      assert.deepEqual(e.headers(), {});
    });
  });

  it('refuses a missing session id with its own message and field', () => {
    const endpoints = endpointsFor(parseServiceTarget({ baseUrl: 'https://h.test', apiKey: 'k-123456' }));
    for (const liveId of [undefined, '']) {
      assert.deepEqual(failure(() => endpoints.session(liveId as unknown as string)), {
        code: 'invalid_request',
        message: 'A session id (live_id) is required.',
        field: 'liveId',
      });
    }
  });
});

describe('describeTarget', () => {
  it('names the surface and the address, never the key', () => {
    const direct = parseServiceTarget({ baseUrl: 'https://h.test', apiKey: KEY });
    assert.equal(describeTarget(direct), 'direct https://h.test');
    assert.ok(!describeTarget(direct).includes(KEY));
    assert.equal(describeTarget(parseServiceTarget({ gatewayUrl: 'https://gw.test' })), 'gateway https://gw.test');
  });
});
