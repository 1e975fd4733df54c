/**
 * The main process's first module: the fatal-error handler (fatal.ts) is in place before the app's own
 * modules load, so an error anywhere, a module that fails to load included, is logged and the kiosk
 * relaunched instead of Electron showing its modal error box. The app (index.ts) is loaded dynamically
 * for that reason.
 */
import { fatal } from './fatal.ts';

try {
  await import('./index.ts');
} catch (error) {
  fatal.report('load', error);
}
