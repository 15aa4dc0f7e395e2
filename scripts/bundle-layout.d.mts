// Types of bundle-layout.mjs, for the integration tests that import it.
export const PAYLOAD_START: string;
export function bundleLayout(text: string): { program: string; payload: string };
