/** Renderer entry: mounts the app. Its state starts at app/KioskApp.svelte.ts (each feature's beside its views).
 *  With no preload (the browser mode), `window.kiosk` is first connected over the host's socket. */
import { mount } from 'svelte';
import App from './App.svelte';
import { connectSocketKiosk } from './app/socket-kiosk.ts';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('#app is missing from index.html');

async function start(): Promise<void> {
  if (!window.kiosk && window.location.protocol.startsWith('http')) {
    const api = await connectSocketKiosk();
    if (api) Object.defineProperty(window, 'kiosk', { value: api });
  }
  mount(App, { target: target! });
}

void start();
