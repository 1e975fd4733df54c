/**
 * The public API of the core, for the CLI, the Electron main process and tests. Pure TypeScript for plain
 * Node: no DOM, no electron. Import from here rather than from individual modules.
 */
export * from './errors.ts';
export * from './clock.ts';
export * from './log.ts';
export * from './protocol.ts';
export * from './rtc-ids.ts';
export * from './session-types.ts';
export * from './transport.ts';
export * from './reconnect-policy.ts';
export * from './control-socket.ts';
export * from './session-machine.ts';
export * from './session-controller.ts';
export * from './rest-client.ts';
export * from './avatar-input.ts';
export * from './surface.ts';
export * from './messages.ts';
