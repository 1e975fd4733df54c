/**
 * `probe --wire-report FILE`: the probe's call, recorded for the wire report (core/wire-report.ts). The
 * call is kept short and cheap: the control socket is first watched for `WIRE_WATCH_MS` before conn_init
 * (nothing is billed before the ack, spec §3), long enough for two pings, so the ping's format and period
 * show without paying for them; then the avatar goes live for `--hold` seconds (default 1) and is hung up.
 */
import { writeFile } from 'node:fs/promises';
import { BILLING_UNIT_S, billableSeconds, creditsFor, CREDITS_PER_BILLING_UNIT, SERVER_PING_INTERVAL_MS } from '../core/protocol.ts';
import type { WireReport } from '../core/wire-report.ts';

/** Two ping periods and a margin: the watch before conn_init sees at least two pings and their gap. */
export const WIRE_WATCH_MS = 2 * SERVER_PING_INTERVAL_MS + 1_000;
/** The hold of a wire-report probe unless --hold says otherwise: inside the shortest billed unit (`BILLING_UNIT_S`). */
export const WIRE_REPORT_HOLD_S = 1;
/** Added to the hold for the estimate: the hangup reaches the service a little after the hold ends. */
const ESTIMATE_MARGIN_MS = 500;

/** What a probe holding `holdSeconds` should cost (spec §8: `CREDITS_PER_BILLING_UNIT` per started `BILLING_UNIT_S`). */
export function costEstimate(holdSeconds: number): { billedSeconds: number; credits: number } {
  const billedSeconds = billableSeconds(holdSeconds * 1000 + ESTIMATE_MARGIN_MS);
  return { billedSeconds, credits: creditsFor(billedSeconds) };
}

/** The line printed before the call starts. */
export function costLine(holdSeconds: number): string {
  const { billedSeconds, credits } = costEstimate(holdSeconds);
  return (
    `this is a billed call: about ${credits} credits (about ${billedSeconds} s live at ${CREDITS_PER_BILLING_UNIT} credits per ${BILLING_UNIT_S} s); ` +
    `the control socket is first watched for ${WIRE_WATCH_MS / 1000} s before conn_init, which is not billed`
  );
}

/** Writes the report as JSON (2-space indented); it holds shapes only, no secret. */
export async function writeWireReport(file: string, report: WireReport): Promise<void> {
  await writeFile(file, JSON.stringify(report, null, 2) + '\n', { mode: 0o644 });
}

/** One line saying what the report found, for the probe's output. */
export function describeWireReport(file: string, report: WireReport): string {
  const ping = report.socket.ping;
  const period = ping.period_ms ? `, every ${ping.period_ms.median} ms` : '';
  const ack = report.socket.ack ? `ack type ${JSON.stringify(report.socket.ack.type)} at ${report.socket.ack.path}` : 'no ack seen';
  return `wrote the wire report to ${file}: ${report.http.length} kinds of HTTP answer, ${report.socket.messages.length} kinds of server message; ping ${ping.format}${period}; ${ack}`;
}
