/**
 * A Svelte action setting an element's height through the CSSOM: the console's CSP (style-src 'self')
 * refuses style attributes, not `element.style` from our own script.
 */
export function height(node: HTMLElement, px: number) {
  node.style.height = `${px}px`;
  return {
    update(next: number) {
      node.style.height = `${next}px`;
    },
  };
}
