/**
 * The fleet's settings as the config file and the policy file give them (electron/kiosk/fleet-config.ts):
 * which opening ranges, dates, topic levels, broker URLs, update channels, signing keys and pinned versions
 * a kiosk takes, and what it says about the ones it refuses.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brokerUrlProblem, isTimeZone, mqttSchema, rangeMinutes, scheduleSchema, updateSchema, WEEKDAYS } from '../../../electron/kiosk/fleet-config.ts';

const firstMessage = (result: { success: boolean; error?: { issues: { message: string; path: PropertyKey[] }[] } }) =>
  result.success ? 'accepted' : `${result.error!.issues[0]!.path.join('.')}: ${result.error!.issues[0]!.message}`;

describe('rangeMinutes: an opening range as minutes of the day', () => {
  it('start and end in minutes, on a 24-hour clock, each hour digit and minute digit counted', () => {
    assert.deepEqual(rangeMinutes('09:00-18:00'), [540, 1080]);
    assert.deepEqual(rangeMinutes('00:00-00:01'), [0, 1]);
    assert.deepEqual(rangeMinutes('10:15-19:45'), [615, 1185]);
    assert.deepEqual(rangeMinutes('20:00-23:59'), [1200, 1439]);
    assert.deepEqual(rangeMinutes('13:50-21:05'), [830, 1265]);
    assert.deepEqual(rangeMinutes('01:00-02:30'), [60, 150]);
    assert.deepEqual(rangeMinutes('22:30-23:00'), [1350, 1380]);
  });

  it('24:00 is the end of the day, and only as an end', () => {
    assert.deepEqual(rangeMinutes('18:00-24:00'), [1080, 1440]);
    assert.deepEqual(rangeMinutes('00:00-24:00'), [0, 1440]);
    assert.equal(rangeMinutes('24:00-24:00'), null);
    assert.equal(rangeMinutes('24:00-23:00'), null);
  });

  it('an end not after the start is no range', () => {
    assert.equal(rangeMinutes('18:00-09:00'), null);
    assert.equal(rangeMinutes('09:00-09:00'), null);
    assert.deepEqual(rangeMinutes('09:00-09:01'), [540, 541]);
  });

  it('refuses what is not HH:MM-HH:MM on a 24-hour clock', () => {
    for (const range of ['9:00-18:00', '09:00-18:0', '24:01-24:00', '25:00-26:00', '09:60-18:00', '09:00-18:60', '09:00-24:01', '09:00-24:30', '30:00-31:00', '09:00 - 18:00', ' 09:00-18:00', '09:00-18:00 ', 'x09:00-18:00', '09:00-18:00x', '09.00-18.00', '09:00–18:00', '', '09:00', 'ab:cd-ef:gh', '0９:00-18:00']) {
      assert.equal(rangeMinutes(range), null, range);
    }
  });
});

describe('scheduleSchema: opening hours', () => {
  const schedule = (over: Record<string, unknown>) => scheduleSchema.safeParse({ timeZone: 'Europe/Berlin', weekly: {}, ...over });

  it('a day takes up to eight ranges; a day left out is closed; the seven weekdays by their short names', () => {
    assert.deepEqual(WEEKDAYS, ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
    const weekly = Object.fromEntries(WEEKDAYS.map((d) => [d, ['09:00-12:00']]));
    assert.equal(firstMessage(schedule({ weekly })), 'accepted');
    assert.equal(firstMessage(schedule({ weekly: { mon: Array(8).fill('09:00-10:00') } })), 'accepted');
    assert.match(firstMessage(schedule({ weekly: { mon: Array(9).fill('09:00-10:00') } })), /^weekly\.mon:/);
  });

  it('a bad range is named with what it should look like', () => {
    assert.equal(
      firstMessage(schedule({ weekly: { tue: ['09:00-18:00', '9-17'] } })),
      'weekly.tue.1: "9-17" is not an opening range such as "09:00-18:00" (24-hour clock, start before end, 24:00 for midnight)',
    );
  });

  it('closed dates are calendar dates YYYY-MM-DD: months 01-12, days 01-31', () => {
    const ok = ['2026-01-01', '2026-09-09', '2026-10-10', '2026-12-25', '2026-02-19', '2026-03-20', '2026-03-29', '2026-03-30', '2026-03-31'];
    assert.equal(firstMessage(schedule({ closedDates: ok })), 'accepted');
    for (const date of ['2026-00-10', '2026-13-01', '2026-1-01', '2026-01-00', '2026-01-32', '2026-01-40', '2026-01-1', '26-01-01', '2026/01/01', ' 2026-01-01', '2026-01-01 ', 'x2026-01-01', '2026-01-01x', '2026-02-3a', 'abcd-01-01']) {
      assert.equal(firstMessage(schedule({ closedDates: [date] })), 'closedDates.0: must be a date such as "2026-12-25"', date);
    }
  });

  it('the time zone is an IANA name; anything else is named with an example', () => {
    assert.equal(isTimeZone('Europe/Berlin'), true);
    assert.equal(isTimeZone('UTC'), true);
    assert.equal(isTimeZone('Mars/Olympus'), false);
    assert.equal(firstMessage(schedule({ timeZone: 'Mars/Olympus' })), 'timeZone: "Mars/Olympus" is not a known time zone (use an IANA name such as "Europe/Berlin")');
  });
});

describe('brokerUrlProblem: which broker URLs a kiosk connects to', () => {
  it('mqtts:// and wss:// anywhere; mqtt:// and ws:// only to this computer', () => {
    for (const url of ['mqtts://broker.example.com:8883', 'wss://broker.example.com/mqtt', 'mqtt://127.0.0.1:1883', 'ws://localhost:9001', 'mqtt://[::1]:1883']) {
      assert.equal(brokerUrlProblem(url), null, url);
    }
    assert.equal(
      brokerUrlProblem('ws://broker.example.com:9001/mqtt'),
      'must start with mqtts:// (got ws://broker.example.com:9001): the password and the kiosk\'s events would cross the network unencrypted; plain mqtt:// is only for a broker on this computer',
    );
  });

  it('refuses other schemes, credentials in the URL (either part), and what is no URL', () => {
    assert.equal(brokerUrlProblem('https://broker.example.com'), 'must start with mqtts:// (got https://)');
    assert.equal(brokerUrlProblem('tcp://broker.example.com'), 'must start with mqtts:// (got tcp://)');
    assert.equal(brokerUrlProblem('mqtts://kiosk@broker.example.com'), 'must not hold a user name or password (use mqtt.username and mqtt.password)');
    assert.equal(brokerUrlProblem('mqtts://:secret@broker.example.com'), 'must not hold a user name or password (use mqtt.username and mqtt.password)');
    assert.equal(brokerUrlProblem('broker.example.com:8883'), 'must start with mqtts:// (got broker.example.com://)');
    assert.equal(brokerUrlProblem('not a url'), 'must be a broker URL such as "mqtts://broker.example.com:8883"');
  });

  it('the schema says the same problem for the url field', () => {
    assert.equal(firstMessage(mqttSchema.safeParse({ url: 'mqtts://u:p@b.example' })), 'url: must not hold a user name or password (use mqtt.username and mqtt.password)');
  });
});

describe('mqttSchema: topic levels and credentials', () => {
  const mqtt = (over: Record<string, unknown>) => mqttSchema.safeParse({ url: 'mqtts://b.example', ...over });

  it('the kiosk id and group are one level of 1-64 letters, digits, ".", "_" or "-", not starting with "_"', () => {
    for (const id of ['a', 'Z', '7', 'lobby-1', 'lobby_1', 'lobby.1', 'x'.repeat(64), 'a_b']) {
      assert.equal(firstMessage(mqtt({ kioskId: id, group: id })), 'accepted', id);
    }
    for (const id of ['', 'x'.repeat(65), 'a/b', 'a+b', 'a#', 'a b', 'ä', ' a', 'a ', 'a\n']) {
      assert.equal(firstMessage(mqtt({ kioskId: id })), 'kioskId: must be 1-64 letters, digits, ".", "_" or "-"', JSON.stringify(id));
      assert.equal(firstMessage(mqtt({ group: id })), 'group: must be 1-64 letters, digits, ".", "_" or "-"', JSON.stringify(id));
    }
    assert.equal(firstMessage(mqtt({ group: '_group' })), 'group: must not start with "_" (topic levels starting with "_" are reserved for the fleet: _fleet, _group)');
  });

  it('the topic prefix is one to four such levels joined by "/", "avatar-kiosk" when not set', () => {
    assert.equal((mqtt({}) as { data: { topicPrefix: string } }).data.topicPrefix, 'avatar-kiosk');
    for (const prefix of ['a', 'venue.one_2-x', 'a/b', 'a/b/c/d', `${'x'.repeat(64)}/${'y'.repeat(64)}`, '_fleet/b']) {
      assert.equal(firstMessage(mqtt({ topicPrefix: prefix })), 'accepted', prefix);
    }
    for (const prefix of ['', 'a/b/c/d/e', 'a/', '/a', 'a//b', 'a/+', 'a/#', 'x'.repeat(65), `a/${'x'.repeat(65)}`, 'a b', 'a/b c', 'ä', ' a', 'a ']) {
      assert.equal(firstMessage(mqtt({ topicPrefix: prefix })), 'topicPrefix: must be 1-4 levels of letters, digits, ".", "_" or "-" joined by "/"', JSON.stringify(prefix));
    }
  });

  it('a password needs a user name; a client certificate needs its key and the other way round', () => {
    assert.equal(firstMessage(mqtt({ username: 'k1' })), 'accepted');
    assert.equal(firstMessage(mqtt({ username: 'k1', password: 'pw' })), 'accepted');
    assert.equal(firstMessage(mqtt({ password: 'pw' })), 'username: mqtt.password needs mqtt.username');
    assert.equal(firstMessage(mqtt({ certFile: '/c.pem', keyFile: '/k.pem' })), 'accepted');
    assert.equal(firstMessage(mqtt({ certFile: '/c.pem' })), 'keyFile: mqtt.certFile and mqtt.keyFile go together');
    assert.equal(firstMessage(mqtt({ keyFile: '/k.pem' })), 'keyFile: mqtt.certFile and mqtt.keyFile go together');
  });
});

describe('updateSchema: where updates come from and which ones count', () => {
  const KEY = `MCowBQYDK2VwAyEA${'A'.repeat(43)}=`;
  const update = (over: Record<string, unknown>) => updateSchema.safeParse({ url: 'https://u.example/kiosk', ...over });

  it('the feed is https://, or http:// only to this computer, said with why', () => {
    assert.equal(firstMessage(update({ url: 'http://127.0.0.1:8080/feed' })), 'accepted');
    assert.equal(firstMessage(update({ url: 'http://localhost/feed' })), 'accepted');
    assert.equal(
      firstMessage(update({ url: 'http://updates.example.com/feed' })),
      'url: must start with https:// (http:// only to this computer): an installer fetched in clear could be swapped on the way',
    );
    assert.equal(firstMessage(update({ url: 'ftp://updates.example.com/feed' })), 'url: must be an http(s) URL');
  });

  it('the channel is 1-32 lower-case letters, digits or "-", "latest" when not set', () => {
    assert.equal((update({}) as { data: { channel: string } }).data.channel, 'latest');
    for (const channel of ['beta', 'b', '2026-q4', 'x'.repeat(32), 'z9-']) assert.equal(firstMessage(update({ channel })), 'accepted', channel);
    for (const channel of ['', 'Beta', 'beta_1', 'beta.1', 'x'.repeat(33), ' beta', 'beta ', 'be ta', 'bêta']) {
      assert.equal(firstMessage(update({ channel })), 'channel: must be lower-case letters, digits or "-"', JSON.stringify(channel));
    }
  });

  it('a signing key is an Ed25519 SPKI in base64, as update-keygen prints it; one to four of them', () => {
    const keys = [KEY, `MCowBQYDK2VwAyEA${'z'.repeat(22)}${'0'.repeat(21)}=`, `MCowBQYDK2VwAyEA${'+/'.repeat(21)}+=`, `MCowBQYDK2VwAyEA${'9'.repeat(43)}=`];
    assert.equal(firstMessage(update({ publicKeys: keys })), 'accepted');
    for (const key of keys) assert.equal(firstMessage(update({ publicKeys: [key] })), 'accepted', key);
    assert.match(firstMessage(update({ publicKeys: [...keys, KEY] })), /^publicKeys:/);
    assert.match(firstMessage(update({ publicKeys: [] })), /^publicKeys:/);
    for (const key of [`MCowBQYDK2VwAyEA${'A'.repeat(42)}=`, `MCowBQYDK2VwAyEA${'A'.repeat(44)}=`, `MCowBQYDK2VwAyEA${'A'.repeat(43)}`, `MCowBQYDK2VwAyEB${'A'.repeat(43)}=`, `MCowBQYDK2VwAyEA${'A'.repeat(42)}-=`, ` ${KEY}`, `${KEY} `, `x${KEY}`, `${KEY}x`]) {
      assert.equal(firstMessage(update({ publicKeys: [key] })), 'publicKeys.0: must be an Ed25519 public key as `update-keygen` prints it ("MCowBQYDK2VwAyEA…", 60 characters)', key);
    }
  });

  it('a pinned version is MAJOR.MINOR.PATCH, with a pre-release part allowed', () => {
    for (const version of ['1.4.2', '0.0.0', '10.20.300', '1.4.2-beta.1', '1.4.2-rc-2', '2.0.0-Alpha9']) assert.equal(firstMessage(update({ pinVersion: version })), 'accepted', version);
    for (const version of ['1.4', '1.4.2.5', 'v1.4.2', '1.4.2-', '1.4.2-beta!', '1.x.2', 'a.4.2', '1.4.b', '1.4.2 ', ' 1.4.2', '1.4.2+build', '.4.2', '1..2', '1.4.']) {
      assert.equal(firstMessage(update({ pinVersion: version })), 'pinVersion: must be a version such as "1.4.2"', version);
    }
  });
});
