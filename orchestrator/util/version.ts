/**
 * The version of kpt-variants: package.json's, the one place it is written. The build puts it in
 * (scripts/bundle.ts gives esbuild `define: { KPT_VARIANTS_VERSION: ... }` from package.json), and so
 * does jest.config.js for the tests that run these sources; nothing else reads package.json at run time.
 */
declare const KPT_VARIANTS_VERSION: string

export const version: string = KPT_VARIANTS_VERSION
