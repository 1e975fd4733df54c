/**
 * runProbe in-process: a fatal error while live (an uncaught exception in the CLI process is routed to
 * the same stop path as SIGINT/SIGTERM) hangs the session up exactly once and exits non-zero.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runProbe, type CliIo, type StopSignal } from '../../electron/cli/probe.ts';
import { silentLogger } from '../../electron/core/log.ts';
import { startEmulator } from '../../electron/emulator/index.ts';
import { loadDemoAvatar } from '../../electron/cli/defaults.ts';
import { realDelay, until } from '../helpers/until.ts';

describe('runProbe', () => {
  describe('when a fatal error happens while live', () => {
    it('hangs up once, prints the report and exits 1', async () => {
      const emulator = await startEmulator({ knobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 0 } });
      try {
        const hooks: { stop?: (signal: StopSignal) => void } = {};
        let stdout = '';
        let stderr = '';
        const io: CliIo = {
          stdout: (t) => void (stdout += t),
          stderr: (t) => void (stderr += t),
          env: {},
          logger: silentLogger,
          onSignal(handler) {
            hooks.stop = handler;
            return () => void delete hooks.stop;
          },
        };
        const demo = loadDemoAvatar();
        const running = runProbe(
          { baseUrl: emulator.baseUrl, apiKey: emulator.apiKey, mode: 'audio', image: demo.image, persona: demo.persona, holdSeconds: 60, json: true },
          io,
        );
        await until(() => emulator.liveCount() === 1, { realTimeoutMs: 10_000 });
        await realDelay(200); // the emulator counts the session live when it sends the ack; let the ack arrive
        assert.ok(hooks.stop, 'runProbe subscribed to stop signals');
        hooks.stop('fatal');
        const code = await running;
        assert.equal(code, 1);
        const report = JSON.parse(stdout) as { live_id: string; hangup_reason: string; went_live: boolean; error: { code: string } };
        assert.equal(report.went_live, true);
        assert.equal(report.hangup_reason, 'user_end');
        assert.equal(report.error.code, 'internal');
        const session = emulator.getSession(report.live_id)!;
        assert.equal(session.status, 'ended');
        assert.equal(session.clientMessages.filter((m) => m.type === 5).length, 1);
        assert.equal(emulator.liveCount(), 0);
        assert.match(stderr, /^probe: An unexpected error stopped the probe; the session was hung up\. \[internal\]\n$/);
      } finally {
        await emulator.close();
      }
    });
  });
});
