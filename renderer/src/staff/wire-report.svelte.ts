/**
 * "Record the service's wire report" (Diagnostics): main runs the service check recorded (nothing billed)
 * and answers what the service sent — shapes only, never a key, token, id or persona. This screen shows the
 * findings in a few lines and offers the report as a file for whoever settles the protocol's open points.
 */
import type { WireCheckResult, WireReport } from '../../../electron/contract.ts';
import type { StaffCalls } from './calls.svelte.ts';

export type WireReportView = { status: 'idle' } | { status: 'running' } | { status: 'done'; result: WireCheckResult } | { status: 'error'; message: string };

export class WireReportRun {
  readonly #calls: StaffCalls;
  #view = $state<WireReportView>({ status: 'idle' });

  constructor(calls: StaffCalls) {
    this.#calls = calls;
  }

  get view(): WireReportView {
    return this.#view;
  }

  async run(): Promise<void> {
    if (this.#view.status === 'running') return;
    this.#view = { status: 'running' };
    const r = await this.#calls.call((s) => s.wireReport());
    this.#view = r.ok ? { status: 'done', result: r.value } : { status: 'error', message: r.error.message };
  }
}

/** The report's findings as label → sentence, for the panel. */
export function wireReportFacts(report: WireReport): Array<{ id: string; label: string; value: string }> {
  const ping = report.socket.ping;
  const every = ping.period_ms ? `, every ${ping.period_ms.median} ms` : '';
  const pingText =
    ping.format === 'none-seen'
      ? 'None seen'
      : ping.format === 'ws-frames'
        ? `WebSocket ping frames only${every}`
        : `${ping.format === 'both' ? 'JSON messages and WebSocket frames' : 'JSON messages'}, type ${JSON.stringify(ping.type)}${every}`;
  // One entry per endpoint and status (the report keeps each shape apart: `ending`, then `ended`).
  const http = [...new Set(report.http.map((h) => `${h.endpoint} ${h.status} (${h.body})`))].join('; ') || 'None';
  const closes = report.socket.closes.map((c) => `${c.code} by the ${c.by}`).join(', ') || 'None';
  const ack = report.socket.ack ? `Type ${JSON.stringify(report.socket.ack.type)}, at ${report.socket.ack.path}` : 'Not seen (this check never starts billing)';
  return [
    { id: 'ping', label: 'Ping', value: pingText },
    { id: 'ack', label: 'Ack', value: ack },
    { id: 'http', label: 'HTTP answers', value: http },
    { id: 'closes', label: 'Socket closes', value: closes },
  ];
}
