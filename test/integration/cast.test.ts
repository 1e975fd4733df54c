/**
 * A cast of avatars: the `avatars` config list resolved (ids, fallbacks, paths), each member's
 * image checked at start-up naming the bad one, PublicConfig.cast, and start({avatarId}) creating the
 * session with that member's image, persona, voice and call mode (read back from the emulator).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHANNELS, type KioskEvent, type PublicConfig, type Result } from '../../electron/contract.ts';
import { AvatarError } from '../../electron/core/errors.ts';
import { checkCast, configuredPortrait, publicCast, resolveVideoFit, startOptionsFor, usableCast } from '../../electron/kiosk/cast.ts';
import { resolveConfig, unknownConfigKeys } from '../../electron/kiosk/config.ts';
import { createChannelRegistry, type ChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PNG_BYTES = Buffer.from(TINY_PNG.split(',')[1]!, 'base64');
const JPEG_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]);

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiosk-cast-'));
  await writeFile(join(dir, 'ava.png'), PNG_BYTES);
  await writeFile(join(dir, 'kim.jpg'), JPEG_BYTES);
  await writeFile(join(dir, 'bob.png'), 'this is not an image');
});
const services: Kiosk[] = [];
after(async () => {
  await Promise.all(services.map((s) => s.shutdown()));
  await rm(dir, { recursive: true, force: true });
});

const opts = () => ({ appRoot: dir, readText: () => 'The default persona.' });
function value<T>(r: Result<T>): T {
  assert.equal(r.ok, true, JSON.stringify(r));
  return (r as { ok: true; value: T }).value;
}

describe('resolveConfig: avatars', () => {
  it('without `avatars` the `avatar` block is a cast of one with id "default"', () => {
    const c = resolveConfig({ callMode: 'audio', avatar: { imagePath: 'ava.png', name: 'Ava', voice: 'Tina' } }, {}, opts());
    assert.deepEqual(c.cast, [
      { id: 'default', name: 'Ava', imagePath: join(dir, 'ava.png'), persona: 'The default persona.', voice: 'Tina', callMode: 'audio', greeting: null, gender: 'neutral' },
    ]);
  });

  it('resolves ids (explicit, else from the name, numbered when taken), paths and fallbacks', () => {
    const c = resolveConfig(
      {
        callMode: 'video',
        avatar: { voice: 'Tina', persona: 'Shared persona.' },
        avatars: [
          { imagePath: 'ava.png', name: 'Dr. Kim' },
          { id: 'dr-kim', imagePath: '/abs/kim.jpg', name: 'Kim', persona: 'Kim persona.', voice: 'Leo', callMode: 'audio', greeting: 'Hi, I am Kim.' },
          { imagePath: 'https://example.com/x.png', name: 'Dr Kim' },
        ],
      },
      {},
      opts(),
    );
    assert.deepEqual(
      c.cast.map((m) => [m.id, m.name, m.imagePath, m.persona, m.voice, m.callMode, m.greeting]),
      [
        ['dr-kim-1', 'Dr. Kim', join(dir, 'ava.png'), 'Shared persona.', 'Tina', 'video', null],
        ['dr-kim', 'Kim', '/abs/kim.jpg', 'Kim persona.', 'Leo', 'audio', 'Hi, I am Kim.'],
        ['dr-kim-3', 'Dr Kim', 'https://example.com/x.png', 'Shared persona.', 'Tina', 'video', null],
      ],
    );
  });

  it('a greeting is one text or one per language, and each member has a grammatical gender (neutral unless said)', () => {
    const c = resolveConfig(
      {
        avatars: [
          { id: 'ava', imagePath: '/abs/ava.png', name: 'Ava', gender: 'female', greeting: { en: 'Welcome!', de: 'Willkommen!' } },
          { id: 'kim', imagePath: '/abs/kim.png', name: 'Kim', greeting: 'Hi, I am Kim.' },
        ],
      },
      {},
      opts(),
    );
    assert.deepEqual(c.cast.map((m) => [m.id, m.greeting, m.gender]), [
      ['ava', { en: 'Welcome!', de: 'Willkommen!' }, 'female'],
      ['kim', 'Hi, I am Kim.', 'neutral'],
    ]);
    for (const [greeting, field] of [
      [{ xx: 'Hello' }, 'avatars.0.greeting'],
      [{}, 'avatars.0.greeting'],
      [{ en: '' }, 'avatars.0.greeting'],
    ] as const) {
      assert.throws(() => resolveConfig({ avatars: [{ imagePath: '/abs/a.png', name: 'A', greeting }] }, {}, opts()), (e: unknown) => e instanceof AvatarError && e.code === 'invalid_config' && e.message.includes(field));
    }
    assert.throws(() => resolveConfig({ avatars: [{ imagePath: '/abs/a.png', name: 'A', gender: 'other' }] }, {}, opts()), /avatars\.0\.gender/);
  });

  for (const [raw, field] of [
    [{ avatars: [{ id: 'a', imagePath: 'x.png', name: 'A' }, { id: 'a', imagePath: 'y.png', name: 'B' }] }, 'avatars.1.id'],
    [{ avatars: [{ imagePath: 'x.png', name: 'A' }, { name: 'B' }] }, 'avatars.1.imagePath'],
    [{ avatars: [{ imagePath: 'x.png', name: 'A', id: 'no spaces' }] }, 'avatars.0.id'],
    [{ avatars: [] }, 'avatars'],
  ] as const) {
    it(`rejects ${JSON.stringify(raw)} naming "${field}"`, () => {
      assert.throws(
        () => resolveConfig(raw, {}, opts()),
        (e: unknown) => e instanceof AvatarError && e.code === 'invalid_config' && e.details?.field === field && e.message.includes(`"${field}"`),
      );
    });
  }
  it('keeps a cast member with a field a newer version wrote (a rollback), and names the field as unknown', () => {
    const raw = { avatars: [{ imagePath: 'x.png', name: 'A', mood: 'happy' }] };
    assert.deepEqual(resolveConfig(raw, {}, opts()).cast.map((m) => m.name), ['A']);
    assert.deepEqual(unknownConfigKeys(raw), ['avatars.0.mood']);
  });
});

describe('checkCast', () => {
  it('accepts PNG/JPEG files by their bytes and names the bad member, with its index and id', async () => {
    const c = resolveConfig(
      { avatars: [{ imagePath: 'ava.png', name: 'Ava' }, { imagePath: 'bob.png', name: 'Bob' }, { imagePath: 'kim.jpg', name: 'Kim' }, { imagePath: 'gone.png', name: 'Gone' }] },
      {},
      opts(),
    );
    const problems = await checkCast(c.cast);
    assert.deepEqual([...problems.keys()].sort(), ['bob', 'gone']);
    const bob = problems.get('bob')!;
    assert.equal(bob.code, 'invalid_config');
    assert.match(bob.message, /^The avatar "Bob" \(avatars\.1, id "bob"\) cannot be used: /);
    assert.match(bob.message, /PNG, JPEG or WEBP/);
    assert.match(problems.get('gone')!.message, /^The avatar "Gone" \(avatars\.3, id "gone"\)/);
    // Staff and the fleet see which setting and which member; the reader's own error is kept as the cause.
    assert.deepEqual(bob.details, { field: 'avatars.1', avatarId: 'bob' });
    assert.ok(bob.cause instanceof Error);
  });
});

describe('checkCast: size', () => {
  it('names a member whose image is over the 20 MB inline limit (read through the injected reader)', async () => {
    const c = resolveConfig({ avatars: [{ imagePath: '/img/small.png', name: 'Small' }, { imagePath: '/img/huge.png', name: 'Huge' }] }, {}, opts());
    const huge = Buffer.alloc(21 * 1024 * 1024);
    PNG_BYTES.copy(huge);
    const problems = await checkCast(c.cast, { readFile: async (path) => (path.endsWith('huge.png') ? huge : PNG_BYTES) });
    assert.deepEqual([...problems.keys()], ['huge']);
    assert.match(problems.get('huge')!.message, /^The avatar "Huge" \(avatars\.1, id "huge"\) cannot be used: .*(20 MB|too large|MB)/i);
  });
});

describe('the cast a visitor may pick, and what the page is told of it', () => {
  const cast = () => resolveConfig({ avatars: [{ id: 'ava', imagePath: 'ava.png', name: 'Ava', greeting: { en: 'Hi', de: 'Hallo' }, gender: 'female' }, { id: 'bob', imagePath: 'bob.png', name: 'Bob', callMode: 'audio' }] }, {}, opts()).cast;
  const bad = (id: string) => new AvatarError('invalid_config', `bad ${id}`);

  it('the good members in order; every member (a copy) when none is good', () => {
    const c = cast();
    assert.deepEqual(usableCast(c, new Map()).map((m) => m.id), ['ava', 'bob']);
    assert.deepEqual(usableCast(c, new Map([['ava', bad('ava')]])).map((m) => m.id), ['bob']);
    const all = usableCast(c, new Map([['ava', bad('ava')], ['bob', bad('bob')]]));
    assert.deepEqual(all.map((m) => m.id), ['ava', 'bob']);
    assert.notEqual(all, c);
  });

  it('each member with its image (null when it has none to show), call mode, greeting and gender', () => {
    const c = cast();
    assert.deepEqual(publicCast(c, new Map([['ava', 'data:image/png;base64,AA'], ['bob', null]])), [
      { id: 'ava', name: 'Ava', imageDataUrl: 'data:image/png;base64,AA', callMode: 'video', greeting: { en: 'Hi', de: 'Hallo' }, gender: 'female' },
      { id: 'bob', name: 'Bob', imageDataUrl: null, callMode: 'audio', greeting: null, gender: 'neutral' },
    ]);
    assert.equal(publicCast(c, new Map())[0]!.imageDataUrl, null);
  });

  it('a call is created with the member, its persona in the visitor\'s language, and the kiosk\'s moderation', () => {
    const config = resolveConfig({ avatar: { persona: 'You are Ava.' }, avatars: [{ id: 'ava', imagePath: 'ava.png', name: 'Ava', voice: 'Leo' }], languageInstructions: { de: 'Sprich Deutsch.' } }, {}, opts());
    const member = config.cast[0]!;
    assert.deepEqual(startOptionsFor(config, 'audio', member, 'de'), {
      callMode: 'audio',
      avatar: { persona: 'You are Ava.\n\nSprich Deutsch.', image: member.imagePath, name: 'Ava', voice: 'Leo' },
      moderation: 'strict',
    });
    assert.equal('extraMotion' in startOptionsFor(config, 'video', member, 'en'), false, 'left to the service unless set');
    const moving = resolveConfig({ extraMotion: false, avatars: [{ id: 'ava', imagePath: 'ava.png', name: 'Ava' }] }, {}, opts());
    assert.equal(startOptionsFor(moving, 'video', moving.cast[0]!, 'en').extraMotion, false);
  });
});

describe('resolveVideoFit', () => {
  it('config wins; else cover in portrait, contain in landscape', () => {
    assert.equal(resolveVideoFit({ video: { fit: 'contain' } }, true), 'contain');
    assert.equal(resolveVideoFit({ video: { fit: 'cover' } }, false), 'cover');
    assert.equal(resolveVideoFit({}, true), 'cover');
    assert.equal(resolveVideoFit({ video: {} }, false), 'contain');
  });
  it('portrait is the display in kiosk mode, the companion size in companion mode, else the configured window', () => {
    const cfg = (mode: 'kiosk' | 'windowed' | 'companion', w = 1080, h = 1920, cw = 420, ch = 640) => ({ window: { mode, width: w, height: h }, companion: { shortcut: 'Alt+K', pushToTalk: false, width: cw, height: ch } });
    assert.equal(configuredPortrait(cfg('kiosk'), { width: 1920, height: 1080 }), false);
    assert.equal(configuredPortrait(cfg('kiosk', 1920, 1080), { width: 1080, height: 1920 }), true);
    assert.equal(configuredPortrait(cfg('kiosk')), true, 'no display known: the configured window');
    assert.equal(configuredPortrait(cfg('companion', 1920, 1080)), true);
    assert.equal(configuredPortrait(cfg('companion', 1080, 1920, 800, 600)), false);
    assert.equal(configuredPortrait(cfg('windowed', 800, 600)), false);
    // A square screen is not portrait; outside kiosk mode the display is not asked.
    assert.equal(configuredPortrait(cfg('kiosk'), { width: 1080, height: 1080 }), false);
    assert.equal(configuredPortrait(cfg('companion', 1080, 1920, 640, 640)), false);
    assert.equal(configuredPortrait(cfg('windowed', 900, 900)), false);
    assert.equal(configuredPortrait(cfg('windowed', 800, 600), { width: 1080, height: 1920 }), false);
  });
});

describe('the kiosk with a cast', () => {
  async function castKiosk(): Promise<{ kiosk: Kiosk; channels: ChannelRegistry }> {
    const config = resolveConfig(
      {
        callMode: 'video',
        window: { mode: 'windowed', width: 1600, height: 900 },
        avatar: { persona: 'Shared persona.' },
        avatars: [
          { id: 'ava', imagePath: 'ava.png', name: 'Ava', greeting: 'Hello!' },
          { id: 'bob', imagePath: 'bob.png', name: 'Bob' },
          { id: 'kim', imagePath: 'kim.jpg', name: 'Kim', persona: 'Kim persona.', voice: 'Leo', callMode: 'audio' },
        ],
      },
      {},
      opts(),
    );
    const channels = createChannelRegistry();
    const kiosk = await createKiosk({ channels, awaitRendererRtc: false, config, apiKey: null, apiKeySource: 'none', emulatorKnobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 10 } });
    services.push(kiosk);
    return { kiosk, channels };
  }

  it('PublicConfig.cast lists the usable members in order; avatar is cast[0]; the bad one is reported', async () => {
    const { kiosk, channels } = await castKiosk();
    const cfg = value((await channels.dispatch(CHANNELS.configGet, undefined)) as Result<PublicConfig>);
    assert.deepEqual(cfg.cast, [
      { id: 'ava', name: 'Ava', imageDataUrl: `data:image/png;base64,${PNG_BYTES.toString('base64')}`, callMode: 'video', greeting: 'Hello!', gender: 'neutral' },
      { id: 'kim', name: 'Kim', imageDataUrl: `data:image/jpeg;base64,${JPEG_BYTES.toString('base64')}`, callMode: 'audio', greeting: null, gender: 'neutral' },
    ]);
    assert.deepEqual(cfg.avatar, { name: 'Ava', imageDataUrl: cfg.cast[0]!.imageDataUrl, voice: 'Tina' });
    assert.deepEqual(cfg.video, { fit: 'contain' }, 'a landscape window defaults to contain');
    assert.equal(kiosk.appearance.castProblems.length, 1);
    assert.match(kiosk.appearance.castProblems[0]!.message, /^The avatar "Bob" \(avatars\.1, id "bob"\)/);
  });

  it('start({avatarId}) uses that member; an unknown id or a bad member answers without creating anything', async () => {
    const { kiosk, channels } = await castKiosk();
    const emulator = kiosk.connection.emulator!;

    const unknown = await channels.dispatch(CHANNELS.sessionStart, { avatarId: 'zed' });
    assert.deepEqual(unknown, { ok: false, error: { code: 'invalid_request', message: 'There is no avatar "zed" in the cast.' } });
    const bad = await channels.dispatch(CHANNELS.sessionStart, { avatarId: 'bob' });
    assert.equal(!bad.ok && bad.error.code, 'invalid_config');
    assert.match(!bad.ok ? bad.error.message : '', /"Bob"/);
    assert.equal(emulator.listSessions().length, 0);

    const events: KioskEvent[] = [];
    kiosk.events.onEvent((e) => events.push(e));
    const { liveId } = value((await channels.dispatch(CHANNELS.sessionStart, { avatarId: 'kim' })) as Result<{ liveId: string | null }>);
    await kiosk.calls.hangup();
    const request = emulator.getSession(liveId!)!.request as { call_mode: string; avatar: { persona: string; name: string; voice: string; image_uri: string } };
    assert.equal(request.call_mode, 'audio');
    // The member's persona, then the default language's instruction (the service has no language field).
    assert.equal(request.avatar.persona, 'Kim persona.\n\nAlways answer in English.');
    assert.equal(request.avatar.name, 'Kim');
    assert.equal(request.avatar.voice, 'Leo');
    assert.match(request.avatar.image_uri, /^data:image\/jpeg;base64,/);

    // No avatarId: the first member (video, Ava).
    const second = value((await channels.dispatch(CHANNELS.sessionStart, {})) as Result<{ liveId: string | null }>);
    await kiosk.calls.hangup();
    const r2 = emulator.getSession(second.liveId!)!.request as { call_mode: string; avatar: { name: string; persona: string } };
    assert.deepEqual([r2.call_mode, r2.avatar.name, r2.avatar.persona], ['video', 'Ava', 'Shared persona.\n\nAlways answer in English.']);
    assert.equal(events.filter((e) => e.type === 'state' && e.state.phase === 'ended').length, 2);
  });
});
