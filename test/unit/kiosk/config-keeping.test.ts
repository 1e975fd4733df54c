/**
 * config.json read so that one mistake costs one setting (electron/kiosk/config-keeping.ts): the bad key is
 * dropped and named with what is used instead, the PIN hash and every other setting are kept; a bad
 * environment variable is named as itself, never blamed on config.json.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { keepConfigFile, resolveConfigKeeping } from '../../../electron/kiosk/config-keeping.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';

const HASH = 'scrypt$16384$8$1$c2FsdA==$aGFzaA==';

describe('a bad setting drops that setting only', () => {
  it('callMode "hologram": video is used, the name and everything else are kept, and the line says so', () => {
    const { config, problems } = resolveConfigKeeping({ staffPinHash: HASH, callMode: 'hologram', avatar: { name: 'Nova' }, returnToAttractSeconds: 7 }, {});
    assert.deepEqual([config.callMode, config.avatar.name, config.returnToAttractSeconds, config.staffPinHash], ['video', 'Nova', 7, HASH]);
    assert.deepEqual(problems.map((p) => [p.source, p.field, p.line]), [['config.json', 'callMode', 'config.json: callMode is invalid, using video']]);
    assert.match(problems[0]!.message, /^Invalid configuration at "callMode": /);
    assert.throws(() => resolveConfig({ staffPinHash: HASH, callMode: 'hologram' }, {}), /callMode/, 'the strict reader still refuses the file whole');
  });

  it('two bad settings: both named, in turn; a nested one keeps its block\'s other keys', () => {
    const { config, problems } = resolveConfigKeeping({ callMode: 'x', idle: { promptSeconds: -4, hangupSeconds: 20 }, avatar: { name: 'Nova' } }, {});
    assert.deepEqual([config.callMode, config.idle.promptSeconds, config.idle.hangupSeconds, config.avatar.name], ['video', 45, 20, 'Nova']);
    assert.deepEqual(problems.map((p) => p.line).sort(), ['config.json: callMode is invalid, using video', 'config.json: idle.promptSeconds is invalid, using 45']);
  });

  it('an http:// AVATAR_BASE_URL is named as the variable, not config.json, and the file\'s own URL is not touched', () => {
    const { config, problems } = resolveConfigKeeping({ staffPinHash: HASH, avatar: { name: 'Nova' } }, { AVATAR_BASE_URL: 'http://avatar.example.com' });
    assert.equal(config.service.baseUrl, undefined);
    assert.equal(config.staffPinHash, HASH);
    assert.deepEqual(problems.map((p) => [p.source, p.field, p.line]), [['AVATAR_BASE_URL', 'service.baseUrl', 'AVATAR_BASE_URL is invalid, not used']]);
    assert.match(problems[0]!.message, /\(from AVATAR_BASE_URL\): must start with https:\/\//);
  });

  it('a file that is not a JSON object: the defaults, said once', () => {
    const { config, problems } = resolveConfigKeeping(['not', 'an', 'object'], {});
    assert.equal(config.callMode, 'video');
    assert.deepEqual(problems.map((p) => p.line), ['config.json: the file must hold a JSON object; using the defaults']);
  });

  it('a valid file: no problem, the same as the strict reader', () => {
    const raw = { staffPinHash: HASH, callMode: 'audio' };
    const { config, problems } = resolveConfigKeeping(raw, {});
    assert.deepEqual(problems, []);
    assert.deepEqual(config, resolveConfig(raw, {}));
  });
});

describe('keepConfigFile: what the Electron app and the browser mode start with', () => {
  it('a readable file with one bad setting: no configError, that setting named, the PIN hash and the unknown keys kept', () => {
    const kept = keepConfigFile(() => ({ staffPinHash: HASH, callMode: 'hologram', window: { hdr: true } }), {});
    assert.equal(kept.configError, null);
    assert.equal(kept.config.staffPinHash, HASH);
    assert.deepEqual(kept.problems.map((p) => p.line), ['config.json: callMode is invalid, using video']);
    assert.deepEqual(kept.unknownKeys, ['window.hdr']);
  });

  it('a file cut short: the defaults, and one sentence saying the file is not valid JSON', () => {
    const kept = keepConfigFile(() => JSON.parse('{"callMode": "aud'), {});
    assert.equal(kept.config.callMode, 'video');
    assert.equal(kept.config.staffPinHash, undefined);
    assert.deepEqual([kept.problems, kept.unknownKeys], [[], []]);
    assert.equal(kept.configError?.code, 'invalid_config');
    assert.match(kept.configError!.message, /^The configuration file is not valid JSON \(Unterminated string in JSON at position \d+/);
  });

  it('a file that cannot be read: says so with the system\'s reason; a typed refusal is passed on as it is', () => {
    const denied = Object.assign(new Error("EACCES: permission denied, open '/data/config.json'"), { code: 'EACCES' });
    assert.equal(keepConfigFile(() => { throw denied; }, {}).configError?.message, "The configuration file cannot be read (EACCES: permission denied, open '/data/config.json').");
    const refusal = new AvatarError('invalid_config', '/data/config.json must hold a JSON object.');
    assert.equal(keepConfigFile(() => { throw refusal; }, {}).configError, refusal);
  });
});

describe('what a dropped setting is replaced with, and what goes with it', () => {
  it('a number, a yes/no, a block, nothing: each said as it is', () => {
    const { problems } = resolveConfigKeeping({ returnToAttractSeconds: 0, allowModeChoice: 'yes', window: 'big', maxCallSeconds: 5 }, {});
    assert.deepEqual(problems.map((p) => p.line).sort(), [
      'config.json: allowModeChoice is invalid, using true',
      'config.json: maxCallSeconds is invalid, not set',
      'config.json: returnToAttractSeconds is invalid, using 15',
      'config.json: window is invalid, using the default',
    ]);
  });

  it('a bad variable over a good file value: the file\'s value is used and said', () => {
    const { config, problems } = resolveConfigKeeping({ window: { mode: 'companion' } }, { KIOSK_WINDOW_MODE: 'tiny' });
    assert.equal(config.window.mode, 'companion');
    assert.deepEqual(problems.map((p) => [p.source, p.line]), [['KIOSK_WINDOW_MODE', 'KIOSK_WINDOW_MODE is invalid, using companion']]);
  });

  it('a bad entry of a list drops the whole list', () => {
    const { config, problems } = resolveConfigKeeping({ avatars: [{ id: 'ok', imagePath: 'a.png', name: 'A' }, { id: '-bad', imagePath: 'b.png', name: 'B' }], callMode: 'audio' }, {});
    assert.equal(config.avatars, undefined);
    assert.equal(config.callMode, 'audio');
    assert.deepEqual(problems.map((p) => [p.field, p.line]), [['avatars.1.id', 'config.json: avatars.1.id is invalid, not set']]);
  });

  it('a rule between two settings whose named one is absent drops the block it lives in', () => {
    const { config, problems } = resolveConfigKeeping({ service: { surface: 'gateway' }, callMode: 'audio' }, {});
    assert.equal(config.service.surface, 'direct');
    assert.equal(config.callMode, 'audio');
    assert.deepEqual(problems.map((p) => p.field), ['service.gatewayUrl']);
  });

  it('no file at all (null): the defaults, no problem', () => {
    assert.deepEqual(resolveConfigKeeping(null, {}).problems, []);
    assert.deepEqual(resolveConfigKeeping(undefined, {}).problems, []);
    assert.equal(resolveConfigKeeping('text', {}).problems[0]!.line, 'config.json: the file must hold a JSON object; using the defaults');
  });

  it('the caller\'s file and environment are not changed', () => {
    const raw = { callMode: 'x', idle: { promptSeconds: -4 } };
    const env = { AVATAR_SURFACE: 'pigeon' };
    resolveConfigKeeping(raw, env);
    assert.deepEqual(raw, { callMode: 'x', idle: { promptSeconds: -4 } });
    assert.deepEqual(env, { AVATAR_SURFACE: 'pigeon' });
  });
});

describe('keepConfigFile: an unreadable file with a bad environment', () => {
  it('the defaults, the reason, and the variable still named', () => {
    const kept = keepConfigFile(() => {
      throw new Error('EIO');
    }, { AVATAR_SURFACE: 'pigeon' });
    assert.equal(kept.configError?.message, 'The configuration file cannot be read (EIO).');
    assert.deepEqual(kept.problems.map((p) => p.source), ['AVATAR_SURFACE']);
    assert.deepEqual(kept.unknownKeys, []);
  });

  it('a parser sentence that already names the file is kept as it is', () => {
    const error = new SyntaxError('The file /data/config.json is not valid JSON: unexpected end');
    const kept = keepConfigFile(() => {
      throw error;
    });
    assert.equal(kept.configError?.message, 'The file /data/config.json is not valid JSON: unexpected end');
    assert.equal(kept.configError?.cause, error);
  });
});

describe('config-keeping: what the last measurement left alive', () => {
  it('a bad entry past the tenth of a list still drops only that list', () => {
    const avatars = Array.from({ length: 11 }, (_, i) => ({ id: i === 10 ? '-bad' : `a${i}`, imagePath: 'a.png', name: `A${i}` }));
    const { config, problems } = resolveConfigKeeping({ avatars, callMode: 'audio' }, {});
    assert.equal(config.avatars, undefined);
    assert.equal(config.callMode, 'audio');
    assert.deepEqual(problems.map((p) => p.field), ['avatars.10.id']);
  });

  it('a rule broken by a setting that is not in the file: said once, and the defaults are used', () => {
    const { config, problems } = resolveConfigKeeping({ languages: ['de'], callMode: 'audio' }, {});
    assert.deepEqual(problems.map((p) => [p.source, p.field]), [['config.json', 'defaultLanguage']]);
    assert.equal(config.callMode, 'video', 'nothing could be dropped to fix it: the defaults');
  });

  it('a file the parser refused in its own sentence is invalid_config; a file that cannot be read keeps the system error as the cause', () => {
    const kept = keepConfigFile(() => {
      throw new SyntaxError('The file /data/config.json is not valid JSON: unexpected end');
    });
    assert.equal(kept.configError?.code, 'invalid_config');
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const unreadable = keepConfigFile(() => {
      throw denied;
    });
    assert.equal(unreadable.configError?.cause, denied);
    assert.equal(unreadable.configError?.code, 'invalid_config');
  });
});
