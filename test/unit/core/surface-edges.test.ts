/**
 * The edges of service configuration: the gateway headers a kiosk authenticates itself with (names a
 * gateway can route, never HTTP's own; printable one-line values; never over cleartext to another
 * computer), what counts as "this computer", and the exact messages an operator reads.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError } from '../../../electron/core/errors.ts';
import {
  checkGatewayHeaders,
  cleartextHeadersProblem,
  cleartextKeyProblem,
  endpointsFor,
  isLoopbackHost,
  parseServiceTarget,
  type ServiceTargetInput,
} from '../../../electron/core/surface.ts';

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

describe('parseServiceTarget edges', () => {
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

  it('treats a blank URL as not set', () => {
    assert.deepEqual(failure(() => parseServiceTarget({ baseUrl: '   ', apiKey: 'k-123456' })), {
      code: 'invalid_config',
      message: 'The avatar service URL (baseUrl) is not set. Enter the address the service provider gave you.',
      field: 'baseUrl',
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

  describe('gateway headers', () => {
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

describe('endpointsFor session ids', () => {
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
