/**
 * The cast of avatars on the attract screen: which member is selected, moving the selection
 * (arrow buttons, arrow keys, swipes, taps), and the config the rest of the UI sees for the selected one.
 *
 * Main sends `PublicConfig.cast` (≥ 1 member, `avatar` is always `cast[0]`). With one member nothing
 * changes: no carousel, `start()` sends no `avatarId`, the config passes through untouched. With two or
 * more, `effectiveConfig` is the config with `avatar.name`/`avatar.imageDataUrl` replaced by the
 * selected member's, so every screen (connecting, live, ended) and the demo engine show the avatar the
 * visitor picked without knowing about the cast. The selection can only change on the attract screen (or
 * by a tray command before a call starts), so the member shown during a call is the one it started with.
 */
import type { CallMode, CastMember, PublicConfig } from '../../../electron/contract.ts';

/** A horizontal move longer than this (CSS px) is a swipe, not a tap. */
export const SWIPE_MIN_PX = 48;

export type SwipeOutcome = 'next' | 'prev' | 'tap' | 'none';

export class Cast {
  readonly #getConfig: () => PublicConfig | null;
  readonly #onSelect: (mode: CallMode) => void;
  #index = $state(0);
  /** The live drag offset of a swipe in progress (px), for the track to follow the finger. */
  #dragPx = $state(0);
  #pointer: { id: number; startX: number; startY: number; moved: boolean } | null = null;
  /** A swipe just ended: the click the browser fires after it is not a tap. */
  #swallowClick = false;

  readonly #members = $derived.by((): CastMember[] => {
    const config = this.#getConfig();
    if (!config) return [];
    // Older mains send no cast: the single configured avatar is the cast.
    if (Array.isArray(config.cast) && config.cast.length > 0) return config.cast;
    return [{ id: 'default', name: config.avatar.name, imageDataUrl: config.avatar.imageDataUrl, callMode: config.callMode, greeting: null, gender: config.avatar.gender ?? 'neutral' }];
  });

  readonly #effective = $derived.by((): PublicConfig | null => {
    const config = this.#getConfig();
    const member = this.selected;
    if (!config || !member) return config;
    // One member: main's avatar block is shown, but the member's grammatical gender is the one that counts.
    if (!this.isCarousel) return member.gender && member.gender !== config.avatar.gender ? { ...config, avatar: { ...config.avatar, gender: member.gender } } : config;
    return { ...config, avatar: { ...config.avatar, name: member.name, imageDataUrl: member.imageDataUrl, gender: member.gender ?? 'neutral' } };
  });

  /**
   * @param getConfig main's PublicConfig (reactive: read inside deriveds)
   * @param onSelect the visitor picked a member: its call mode becomes the call's (the mode choice, when
   *   allowed, can still change it afterwards)
   */
  constructor(getConfig: () => PublicConfig | null, onSelect: (mode: CallMode) => void) {
    this.#getConfig = getConfig;
    this.#onSelect = onSelect;
  }

  get members(): CastMember[] {
    return this.#members;
  }
  /** Two or more avatars: the attract screen shows the carousel. */
  get isCarousel(): boolean {
    return this.#members.length >= 2;
  }
  get index(): number {
    return Math.min(this.#index, Math.max(0, this.#members.length - 1));
  }
  get selected(): CastMember | null {
    return this.#members[this.index] ?? null;
  }
  get dragPx(): number {
    return this.#dragPx;
  }
  get isDragging(): boolean {
    return this.#pointer?.moved === true;
  }
  /** The config with the selected member as `avatar` (the config itself with one avatar). */
  get effectiveConfig(): PublicConfig | null {
    return this.#effective;
  }
  /** What `session.start` adds: the member's id, only when there is a choice. */
  get startArgs(): { avatarId?: string } {
    const member = this.selected;
    return this.isCarousel && member ? { avatarId: member.id } : {};
  }

  /** A new config arrived: back to the first member, with its call mode. */
  reset(): void {
    this.#index = 0;
    this.#applyMode();
  }

  select(index: number): void {
    const n = this.#members.length;
    if (n === 0) return;
    const next = ((index % n) + n) % n;
    if (next === this.index) return;
    this.#index = next;
    this.#applyMode();
  }

  /** Select by id (a tray "Talk to …" item). False when no member has that id. */
  selectById(id: string): boolean {
    const i = this.#members.findIndex((m) => m.id === id);
    if (i < 0) return false;
    this.select(i);
    return true;
  }

  next(): void {
    this.select(this.index + 1);
  }
  prev(): void {
    this.select(this.index - 1);
  }

  /** Arrow keys move the selection (wrapping); returns whether the key was used. */
  handleKey(key: string): boolean {
    if (!this.isCarousel) return false;
    this.#swallowClick = false;
    if (key === 'ArrowRight' || key === 'ArrowDown') this.next();
    else if (key === 'ArrowLeft' || key === 'ArrowUp') this.prev();
    else if (key === 'Home') this.select(0);
    else if (key === 'End') this.select(this.#members.length - 1);
    else return false;
    return true;
  }

  // --- swipe: the track follows the finger, a long enough horizontal move changes the selection ----

  pointerDown(id: number, x: number, y: number): void {
    this.#swallowClick = false;
    this.#pointer = { id, startX: x, startY: y, moved: false };
    this.#dragPx = 0;
  }

  pointerMove(id: number, x: number, y: number): void {
    const p = this.#pointer;
    if (!p || p.id !== id) return;
    const dx = x - p.startX;
    // Mostly vertical moves are not ours (a scroll, a shaky tap).
    if (!p.moved && Math.abs(dx) > 8 && Math.abs(dx) > Math.abs(y - p.startY)) p.moved = true;
    if (p.moved) this.#dragPx = dx;
  }

  /** The pointer went up: a swipe moves the selection; a short touch is a tap on what is under it. */
  pointerUp(id: number, x: number): SwipeOutcome {
    const p = this.#pointer;
    if (!p || p.id !== id) return 'none';
    this.#pointer = null;
    this.#dragPx = 0;
    const dx = x - p.startX;
    this.#swallowClick = p.moved;
    if (p.moved && dx <= -SWIPE_MIN_PX) {
      this.next();
      return 'next';
    }
    if (p.moved && dx >= SWIPE_MIN_PX) {
      this.prev();
      return 'prev';
    }
    return p.moved ? 'none' : 'tap';
  }

  /** Whether a click is a real tap/keypress (false right after a swipe, once). */
  takeClick(): boolean {
    const ok = !this.#swallowClick;
    this.#swallowClick = false;
    return ok;
  }

  pointerCancel(): void {
    this.#pointer = null;
    this.#dragPx = 0;
  }

  #applyMode(): void {
    const member = this.selected;
    if (member && this.isCarousel) this.#onSelect(member.callMode);
  }
}
