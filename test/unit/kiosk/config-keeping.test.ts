/**
 * config.json read so that one mistake costs one setting (electron/kiosk/config-keeping.ts): the bad key is
 * dropped and named with what is used instead, the PIN hash and every other setting are kept; a bad
 * environment variable is named as itself, never blamed on config.json.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfigKeeping } from '../../../electron/kiosk/config-keeping.ts';
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
