/**
 * Server-side HTML: htm tagged templates over Preact's `h`, rendered to a string.
 *
 * Why this pair: htm needs no build step (Node runs our TypeScript by stripping types, which leaves JSX
 * unsupported), and preact-render-to-string escapes every interpolated value, so user text such as an
 * incident name or a check's response body cannot become markup. docs/architecture.md, "Web pages".
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

/** `html\`<p>${text}</p>\`` builds a node; interpolations are escaped when rendered. */
export { html };

/** A component: props in, a node (or nothing) out. */
export type View<P> = (props: P) => VNode | null;

/** The whole document: doctype plus the rendered tree. */
export function renderDocument(root: VNode): string {
  return `<!doctype html>${render(root)}`;
}

/** A fragment (no doctype): for parts fetched by a page's script. */
export function renderFragment(node: VNode): string {
  return render(node);
}
