/**
 * What main keeps of a call: the renderer's connection figures and the call's field figures from the tap.
 * Part of the IPC contract (electron/contract.ts re-exports it). The quality levels live here, not beside
 * `callQualityArgsSchema` in contract.ts, because the renderer both sends them and receives them back
 * (`StaffStatus.lastCall`), and this folder may not import contract.ts (that would be a circle).
 */
import type { CallMode } from '../core/protocol.ts';

/** How the call's connection is doing, from the RTC SDK's network quality (unknown: no figure yet). */
export const CALL_QUALITY_LEVELS = ['unknown', 'good', 'fair', 'poor', 'down'] as const;
export type CallQualityLevel = (typeof CALL_QUALITY_LEVELS)[number];

/**
 * One call's field figures, all from the tap (ms; null: did not happen): our RTC side ready, the conn_init
 * ack (live), the avatar's user-published, its first decoded frame (video) or first audio; the channel
 * join's own duration; the cloud proxy mode; how the call ended. Emitted once per tap, just before its
 * terminal state (ledger, /metrics, fleet status, staff Status tab).
 */
export interface CallFigures {
  liveId: string | null;
  callMode: CallMode;
  tapToRtcReadyMs: number | null;
  tapToConnInitAckMs: number | null;
  tapToAvatarPublishedMs: number | null;
  tapToFirstFrameMs: number | null;
  tapToFirstAudioMs: number | null;
  joinMs: number | null;
  proxy: 'off' | 'udp' | 'tcp';
  endReason: string;
}

/** The last call's figures as main keeps them (staff Status tab, /metrics). */
export interface LastCallQuality {
  bitrateKbps: number;
  packetLossPct: number;
  frameRate: number;
  rttMs: number;
  level: CallQualityLevel;
  /** When main received these figures (ms since the epoch). */
  atMs: number;
  /** The call had ended when these were sent (its final figures). */
  final: boolean;
}
