/**
 * A Svelte action setting a bar's width (percent of its track) through the CSSOM: the console's CSP
 * (style-src 'self') refuses style attributes, not `element.style` from our own script.
 */
export function barWidth(node: HTMLElement, percent: number) {
  const set = (p: number) => (node.style.width = `${Math.max(0, Math.min(100, p))}%`);
  set(percent);
  return { update: set };
}
