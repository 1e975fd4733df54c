/**
 * The DOM side of a LiveView: the persistent stage elements (mounted once, shown only on the live
 * screen) that engines render into. `clear()` detaches streams and removes whatever an SDK inserted,
 * so nothing of a finished call stays on screen or keeps a device open.
 */
import type { LiveView } from '../rtc/engine.ts';

export class DomLiveView implements LiveView {
  constructor(
    readonly avatarHost: HTMLElement,
    readonly selfHost: HTMLElement,
    private readonly avatarVideo: HTMLVideoElement,
    private readonly selfVideo: HTMLVideoElement,
  ) {}

  showAvatarStream(stream: MediaStream): void {
    this.avatarVideo.srcObject = stream;
    void this.avatarVideo.play().catch(() => undefined); // muted: autoplay is always allowed
  }

  showSelfStream(stream: MediaStream): void {
    this.selfVideo.srcObject = stream;
    void this.selfVideo.play().catch(() => undefined);
  }

  clear(): void {
    for (const v of [this.avatarVideo, this.selfVideo]) {
      v.pause();
      v.srcObject = null;
      v.removeAttribute('src');
    }
    // SDK-inserted players (agora-web's <div><video>, native canvases): everything but our own <video>.
    for (const host of [this.avatarHost, this.selfHost]) {
      for (const child of [...host.children]) if (child !== this.avatarVideo && child !== this.selfVideo) child.remove();
    }
  }
}
